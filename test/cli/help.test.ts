import { cliPath, runCli, runNode } from './run-cli.js';

// Every command is in `lazy-mcp --help`; every --help goes to stdout with exit 0, even
// serve's (whose stdout is otherwise the protocol's); a usage error is one line on stderr, exit 2.
const COMMANDS = ['tools', 'search', 'tool', 'call', 'resources', 'read', 'status', 'login', 'prompts', 'prompt', 'serve', 'daemon'];

describe('lazy-mcp --help', () => {
  it('lists every command, serve included', async () => {
    const help = await runCli(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    const listed = [...help.stdout.split('Commands:\n')[1].split('\n\n')[0].matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]);
    expect(listed).toEqual(COMMANDS);
    expect(help.stdout).toContain('lazy-mcp serve');
  });

  it('has no line wider than 80 columns, in any help text', async () => {
    const helps = await Promise.all([runCli(['--help']), ...COMMANDS.map((command) => runNode(cliPath, [command, '--help']))]);
    for (const help of helps) {
      expect(help.code).toBe(0);
      const wide = help.stdout.split('\n').filter((line) => [...line].length > 80);
      expect(wide).toEqual([]);
    }
  });

  it.each(COMMANDS)('%s --help prints on stdout and exits 0', async (command) => {
    const help = await runNode(cliPath, [command, '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^lazy-mcp( serve| daemon)? — /);
  });

  it.each([
    [['serve', '--nope'], /^lazy-mcp serve: .*--nope/],
    [['serve', '--port', 'many'], /^lazy-mcp serve: --port must be a whole number from 0 to 65535, got "many"$/],
    [['serve', 'extra'], /^lazy-mcp serve: /],
    [['serv'], /^lazy-mcp: unknown command "serv"; did you mean serve\?/],
    [['--verbose', 'serve'], /^lazy-mcp: "serve" takes its options after it/],
    [['daemon', 'restart'], /^lazy-mcp daemon: unknown action "restart"; expected status, stop or log$/],
    [['daemon'], /^lazy-mcp daemon: no action given/],
  ])('%j is a usage error: exit 2, one line on stderr, nothing on stdout', async (args, message) => {
    const run = await runNode(cliPath, args as string[]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr.endsWith('\n')).toBe(true);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr.trimEnd()).toMatch(message);
  });
});
