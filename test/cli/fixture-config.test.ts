import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, repoRoot, waitFor } from '../support/fixtures.js';
import { childrenOf, fixtureConfig, runCli, scratchDir } from './run-cli.js';

// The CLI end to end, as a child process, on configs of test fixtures.
const echo = ['--config', fixtureConfig('cli-echo.json')];
const mixed = ['--config', fixtureConfig('cli-mixed.json')];

let scratch: ReturnType<typeof scratchDir>;
beforeAll(() => {
  scratch = scratchDir();
});
afterAll(() => scratch.remove());

describe('tools', () => {
  it('prints one line per tool, name and first sentence, within 80 columns', async () => {
    const run = await runCli(['tools', ...echo]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(12);
    expect(lines[0]).toBe('mcp__echo__echo           Echo the text back');
    // A first sentence too long for the line is cut at a word, with …
    expect(lines).toContain('mcp__echo__missing_file   Fails with a JSON-RPC error of its own that says…');
    expect(lines.every((line) => [...line].length <= 80)).toBe(true);
  });

  it('prints an aligned table of public name, server and first description line with --long', async () => {
    const run = await runCli(['tools', '--long', ...echo]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TOOL\s+SERVER\s+DESCRIPTION$/);
    expect(lines).toContain('mcp__echo__echo           echo    Echo the text back');
    // Every row's server column starts where the header's does.
    const column = lines[0].indexOf('SERVER');
    expect(lines.every((line) => line.slice(column).startsWith('echo') || line === lines[0])).toBe(true);
  });

  it('prints pure JSON with --json', async () => {
    const run = await runCli(['tools', '--json', ...echo]);
    expect(run.code).toBe(0);
    const tools = JSON.parse(run.stdout) as { name: string; server: string; tool: { name: string } }[];
    expect(tools.find((t) => t.name === 'mcp__echo__add')).toMatchObject({ server: 'echo', tool: { name: 'add', description: 'Add two numbers' } });
  });

  it('lists what works and says on stderr which servers failed, with exit status 1', async () => {
    const run = await runCli(['tools', ...mixed]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('mcp__echo__echo');
    expect(run.stdout).not.toContain('mcp__off__');
    const errors = run.stderr.trimEnd().split('\n');
    expect(errors).toEqual([
      expect.stringMatching(/^lazy-mcp: server "broken": initialize failed: .*exited with code 1.*DATABASE_URL is not set/),
      // Nothing listens on 127.0.0.1:2 (a root-only port fetch does not block): an unreachable remote server, offline.
      expect.stringMatching(/^lazy-mcp: server "web": .*cannot reach http:\/\/127\.0\.0\.1:2 \(ECONNREFUSED\)/),
      expect.stringMatching(/^lazy-mcp: server "typo": config field "args" must be an array of strings/),
    ]);
  });

  it('limits the listing to --server and rejects an unknown server', async () => {
    const [only, unknown] = await Promise.all([runCli(['tools', '--server', 'echo', '--json', ...mixed]), runCli(['tools', '--server', 'nope', ...echo])]);
    expect(only.code).toBe(0);
    expect(new Set((JSON.parse(only.stdout) as { server: string }[]).map((t) => t.server))).toEqual(new Set(['echo']));
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: 'lazy-mcp: no server named "nope"; configured: echo\n' });
  });
});

describe('call', () => {
  it('prints a text result', async () => {
    const run = await runCli(['call', 'mcp__echo__echo', '{"text":"hello there"}', ...echo]);
    expect(run).toMatchObject({ code: 0, stdout: 'hello there\n', stderr: '' });
  });

  it('prints the whole result as JSON with --json', async () => {
    const run = await runCli(['call', 'mcp__echo__add', '{"a":2,"b":40}', '--json', ...echo]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } });
  });

  it('reads the arguments from --args-file, or from stdin with "-"', async () => {
    const file = join(scratch.path, 'args.json');
    writeFileSync(file, '{"text":"from a file"}');
    const [fromFile, fromStdin] = await Promise.all([
      runCli(['call', 'mcp__echo__echo', '--args-file', file, ...echo]),
      runCli(['call', 'mcp__echo__echo', '--args-file', '-', ...echo], { input: '{"text":"from stdin"}' }),
    ]);
    expect(fromFile.stdout).toBe('from a file\n');
    expect(fromStdin.stdout).toBe('from stdin\n');
  });

  it('exits 1 with the tool\'s own message when the result has isError', async () => {
    const [run, json] = await Promise.all([runCli(['call', 'mcp__echo__fail', '{"why":"disk\\nfull"}', ...echo]), runCli(['call', 'mcp__echo__fail', '--json', ...echo])]);
    expect(run).toMatchObject({ code: 1, stdout: '', stderr: 'lazy-mcp: mcp__echo__fail failed: disk full\n' });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ isError: true });
  });

  it('exits 2 with the error of an unknown tool, suggesting close names', async () => {
    const run = await runCli(['call', 'mcp__echo__ech', ...echo]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^lazy-mcp: server "echo": no tool named "mcp__echo__ech"; did you mean mcp__echo__echo\b[^\n]*\n$/);
  });

  it('exits 1 when the call times out, and the server still goes away', async () => {
    const run = await runCli(['call', 'mcp__echo__slow', '{"ms":20000}', '--timeout', '100', ...echo]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^lazy-mcp: server "echo": tools\/call .*timed out after 100 ms.*\n$/);
  });

  it('exits 1 with the crash when the server dies mid-call', async () => {
    const run = await runCli(['call', 'mcp__echo__crash', ...echo]);
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('about to crash');
  });

  it('exits 2 on arguments that are not a JSON object', async () => {
    const [bad, array] = await Promise.all([runCli(['call', 'mcp__echo__echo', '{text:1}', ...echo]), runCli(['call', 'mcp__echo__echo', '[1]', ...echo])]);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^lazy-mcp: json-args is not valid JSON: .*\n$/);
    expect(array.stderr).toBe('lazy-mcp: json-args must be a JSON object such as {"text":"hi"}, got an array\n');
  });

  it('gives a misconfigured server its config error (exit 2) and a disabled one unavailable (exit 1)', async () => {
    const [invalid, disabled] = await Promise.all([runCli(['call', 'mcp__typo__x', ...mixed]), runCli(['call', 'mcp__off__echo', ...mixed])]);
    expect(invalid).toMatchObject({ code: 2, stderr: expect.stringMatching(/^lazy-mcp: server "typo": config field "args"/) });
    expect(disabled).toMatchObject({ code: 1, stderr: 'lazy-mcp: server "off": the server is disabled in the config\n' });
  });

  it('on SIGINT cancels the call, stops the server and exits 130', async () => {
    let serverPids: number[] = [];
    const run = await runCli(['call', 'mcp__echo__slow', '{"ms":20000}', '--verbose', ...echo], {
      onSpawn: (child, output) => {
        // Interrupt once the server runs and the call is in flight (or after 10 s, failing below).
        void waitFor(() => /starting echo… ready in \d+ ms/.test(output.stderr()), 10_000).then(() => {
          serverPids = childrenOf(child.pid as number);
          child.kill('SIGINT');
        });
      },
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/lazy-mcp: interrupted\n$/);
    expect(serverPids).toHaveLength(1);
    expect(await waitFor(() => !isAlive(serverPids[0]), 3000)).toBe(true);
  });
});

describe('resources and read', () => {
  it('lists resources and templates as tables, or as JSON', async () => {
    const [run, jsonRun] = await Promise.all([runCli(['resources', ...echo]), runCli(['resources', '--json', ...echo])]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^URI\s+SERVER\s+NAME\s+TYPE\nmem:\/\/greeting\s+echo\s+greeting\s+text\/plain\n/);
    expect(run.stdout).toMatch(/\n\nURI TEMPLATE\s+SERVER\s+NAME\nmem:\/\/\{name\}\s+echo\s+memory\n$/);
    const json = JSON.parse(jsonRun.stdout);
    expect(json.resources).toHaveLength(2);
    expect(json.resourceTemplates[0]).toEqual({ server: 'echo', resourceTemplate: { uriTemplate: 'mem://{name}', name: 'memory' } });
  });

  it('fails with the server\'s error when the one --server asked for cannot start', async () => {
    const run = await runCli(['resources', '--server', 'broken', ...mixed]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/^lazy-mcp: server "broken": initialize failed: .*\n$/);
  });

  it('reads a resource as text, or as JSON', async () => {
    const [text, json] = await Promise.all([runCli(['read', 'echo', 'mem://greeting', ...echo]), runCli(['read', 'echo', 'mem://farewell', '--json', ...echo])]);
    expect(text).toMatchObject({ code: 0, stdout: 'hello\n', stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ contents: [{ uri: 'mem://farewell', mimeType: 'text/plain', text: 'bye' }] });
  });

  it('exits 1 with the server\'s answer for a resource it does not have', async () => {
    const run = await runCli(['read', 'echo', 'mem://nothing', ...echo]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toMatch(/^lazy-mcp: server "echo": .*Resource not found: mem:\/\/nothing.*\n$/);
  });
});

describe('status', () => {
  it('shows each server\'s state after starting them, with the errors', async () => {
    // A server whose start failed, and one whose entry is invalid: the status is a failure.
    const run = await runCli(['status', ...mixed]);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    const rows = run.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^SERVER\s+STATE\s+TOOLS\s+ERROR$/);
    expect(rows[1]).toMatch(/^echo\s+ready\s+12$/);
    expect(rows[2]).toMatch(/^broken\s+backoff\s+-\s+server "broken": initialize failed/);
    expect(rows[3]).toMatch(/^web\s+backoff\s+-\s+server "web": .*cannot reach http:\/\/127\.0\.0\.1:2/);
    expect(rows[4]).toMatch(/^off\s+disabled\s+-$/);
    expect(rows[5]).toMatch(/^typo\s+invalid\s+-\s+server "typo": config field "args"/);
  });

  it('prints JSON with --json, errors as code and message', async () => {
    const status = JSON.parse((await runCli(['status', '--json', ...mixed])).stdout);
    expect(status.echo).toMatchObject({ state: 'ready', tools: 12, restarts: 0 });
    expect(status.broken).toMatchObject({ state: 'backoff', lastError: { code: 'peer-exited', phase: 'initialize', message: expect.stringContaining('DATABASE_URL') } });
    expect(status.typo.lastError).toMatchObject({ code: 'invalid-config', phase: 'config' });
  });
});

describe('search', () => {
  it('lists the tools first when none is known, saying so, then prints the best matches one a line', async () => {
    const run = await runCli(['search', 'add', 'two', 'numbers', ...echo]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('lazy-mcp: listing the tools of echo first (not known yet; --cache-dir DIR keeps them for later runs)\n');
    expect(run.stdout.split('\n')[0]).toBe('mcp__echo__add  Add two numbers');
  });

  it('answers from the cache without starting anything, honours --limit, prints JSON, and says when nothing matches', async () => {
    const cache = ['--cache-dir', join(scratch.path, 'search-cache'), ...echo];
    expect((await runCli(['tools', ...cache])).code).toBe(0);
    const warm = await runCli(['search', 'a', 'tool', 'that', 'reports', 'its', 'failure', '--limit', '1', '--verbose', ...cache]);
    expect(warm).toMatchObject({ code: 0, stdout: 'mcp__echo__fail  A tool that reports its own failure\n' });
    expect(warm.stderr).not.toMatch(/starting echo|listing the tools/);
    const json = await runCli(['search', 'mcp__echo__echo', '--json', ...cache]);
    expect((JSON.parse(json.stdout) as { name: string }[])[0].name).toBe('mcp__echo__echo');
    const none = await runCli(['search', 'zebra', 'giraffe', ...cache]);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'lazy-mcp: no tool matches "zebra giraffe"; try other words, or lazy-mcp tools\n' });
  });

  it.each([
    [['search'], 'lazy-mcp: "search" needs <words> (see lazy-mcp --help)\n'],
    [['search', ' '], 'lazy-mcp: "search" needs some words, such as: lazy-mcp search read a file (see lazy-mcp --help)\n'],
    [['search', 'x', '--limit', '0'], 'lazy-mcp: --limit must be a whole number from 1 to 1000, got "0" (see lazy-mcp --help)\n'],
    [['tools', '--limit', '3'], 'lazy-mcp: option --limit does not apply to "tools" (see lazy-mcp --help)\n'],
  ])('%j is a usage error', async (args, stderr) => {
    expect(await runCli([...args, ...echo])).toMatchObject({ code: 2, stdout: '', stderr });
  });
});

describe('--cache-dir', () => {
  it('lets a later run list tools without starting any server', async () => {
    const cache = ['--cache-dir', join(scratch.path, 'cache'), ...echo];
    expect((await runCli(['tools', ...cache])).code).toBe(0);
    const later = await runCli(['status', '--json', '--verbose', ...cache]);
    expect(JSON.parse(later.stdout).echo).toEqual({ state: 'idle', transport: 'stdio', restarts: 0, tools: 12, prompts: 0 });
    expect(later.stderr).not.toContain('starting echo');
  });
});

describe('--verbose', () => {
  it('streams start progress and server stderr to stderr, never to stdout', async () => {
    const run = await runCli(['call', 'mcp__echo__slow', '{"ms":60,"interval":20}', '--verbose', ...echo]);
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(run.stderr).toContain(`lazy-mcp: using config ${fixtureConfig('cli-echo.json')}\n`);
    expect(run.stderr).toMatch(/starting echo… ready in \d+ ms\n/);
    expect(run.stderr).toContain('mcp__echo__slow: 3/3 step 3\n');
  });

  it('adds the stack and the server\'s stderr to an error', async () => {
    const run = await runCli(['call', 'mcp__broken__x', '--verbose', ...mixed]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('[broken] fatal: DATABASE_URL is not set\n');
    expect(run.stderr).toContain('  code: peer-exited, phase: initialize, server: broken\n');
    expect(run.stderr).toMatch(/\n\s+at .*\.js:\d+:\d+\)?\n/);
  });
});

describe('config and usage errors', () => {
  it('reports a config file that is not JSON in one line, exit 2', async () => {
    const file = join(scratch.path, 'broken.json');
    writeFileSync(file, '{ "mcpServers": { ');
    const run = await runCli(['tools', '--config', file]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(new RegExp(`^lazy-mcp: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: config is not valid JSON: [^\\n]*\\n$`));
  });

  it('reports a config of the wrong shape and a missing file, exit 2', async () => {
    const file = join(scratch.path, 'shape.json');
    writeFileSync(file, '{"servers": []}');
    const [shape, missing] = await Promise.all([runCli(['status', '--config', file]), runCli(['status', '--config', join(scratch.path, 'none.json')])]);
    expect(shape).toMatchObject({ code: 2, stderr: expect.stringMatching(/^lazy-mcp: .*shape\.json: config must be an object with "mcpServers".*\n$/) });
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/^lazy-mcp: cannot read config file .*none\.json: ENOENT[^\n]*\n$/) });
  });

  it('uses ./.mcp.json of the working directory when there is one', async () => {
    const dir = join(scratch.path, 'project');
    mkdirSync(dir);
    writeFileSync(join(dir, '.mcp.json'), readFileSync(fixtureConfig('cli-echo.json')));
    const run = await runCli(['call', 'mcp__echo__echo', '{"text":"local"}'], { cwd: dir });
    expect(run).toMatchObject({ code: 0, stdout: 'local\n' });
  });

  it.each([
    [[], /^lazy-mcp: no command given/],
    [['launch'], /^lazy-mcp: unknown command "launch"/],
    [['tools', '--bogus'], /^lazy-mcp: unknown option --bogus \(see lazy-mcp --help\)\n$/],
    [['tools', '--sever', 'x'], /^lazy-mcp: unknown option --sever; did you mean --server\?/],
    [['staus'], /^lazy-mcp: unknown command "staus"; did you mean status\?/],
    [['tools', '--timeout', '5'], /^lazy-mcp: option --timeout does not apply to "tools"/],
    [['call'], /^lazy-mcp: "call" needs <public-name>/],
    [['call', 'x', '--timeout', 'soon'], /^lazy-mcp: --timeout must be a positive whole number of milliseconds, got "soon"/],
  ])('exits 2 on a usage error: %j', async (args, message) => {
    const run = await runCli(args as string[]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('prints help and the version on stdout, exit 0', async () => {
    const [help, version] = await Promise.all([runCli(['--help']), runCli(['--version'])]);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('lazy-mcp call <public-name> [json-args | key=value... | --args-file F]\n                [--timeout MS] [--max-time MS] [--json]');
    const { version: expected } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    expect(version).toMatchObject({ code: 0, stdout: `${expected}\n` });
  });
});
