import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { fixtureConfig, runCli, scratchDir } from './run-cli.js';

// The command line's conventions end to end: one tool's description, key=value arguments
// typed by the schema, --max-time, "did you mean", exit statuses, --json errors, colour.
let scratch: ReturnType<typeof scratchDir>;
let typed: string[];
const echo = ['--config', fixtureConfig('cli-echo.json')];
beforeAll(() => {
  scratch = scratchDir();
  const config = join(scratch.path, 'typed.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { typed: { command: process.execPath, args: [join(repoRoot, 'test/fixtures/typed-tools.mjs')] } } }));
  typed = ['--config', config];
});
afterAll(() => scratch.remove());

describe('tool', () => {
  it('shows one tool: names, description, an argument table and the input schema', async () => {
    const [text, json] = await Promise.all([runCli(['tool', 'mcp__typed__show_args', ...typed]), runCli(['tool', 'mcp__typed__show_args', '--json', ...typed])]);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('mcp__typed__show_args  (server typed, tool "show_args")');
    expect(lines[2]).toMatch(/^Returns its arguments as JSON\. A longer description/);
    expect(text.stdout).toMatch(/\nARGUMENT\s+TYPE\s+REQUIRED\s+DESCRIPTION\ntext\s+string\s+yes\s+Some text\ncount\s+integer\n/);
    expect(text.stdout).toMatch(/\nlimit\s+integer\|null\n/);
    expect(text.stdout).toContain('\nInput schema:\n{\n  "type": "object",');
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'mcp__typed__show_args', server: 'typed', tool: { name: 'show_args', inputSchema: { required: ['text'] } } });
  });

  it('suggests the public name for a raw tool name or a typo in the server part, exit 2', async () => {
    const [raw, typo, call] = await Promise.all([
      runCli(['tool', 'show_args', ...typed]),
      runCli(['tool', 'mcp__typd__show_args', ...typed]),
      runCli(['call', 'mcp__typd__show_args', 'text=x', ...typed]),
    ]);
    expect(raw).toMatchObject({ code: 2, stdout: '' });
    expect(raw.stderr).toBe('lazy-mcp: no tool named "show_args" (public names are mcp__<server>__<tool>, see lazy-mcp tools); did you mean mcp__typed__show_args?\n');
    expect(typo).toMatchObject({ code: 2 });
    expect(typo.stderr).toMatch(/did you mean mcp__typed__show_args\?\n$/);
    expect(call).toMatchObject({ code: 2 });
    expect(call.stderr).toBe(typo.stderr);
    expect(typo.stderr).toBe('lazy-mcp: no server named "typd" for tool "mcp__typd__show_args" (configured: typed); did you mean mcp__typed__show_args?\n');
    // Without key=value pairs the manager routes the call; the suggestion is the same.
    const routed = await runCli(['call', 'mcp__typd__show_args', ...typed]);
    expect(routed).toMatchObject({ code: 2, stderr: typo.stderr });
  });
});

describe('call with key=value pairs', () => {
  it('types each value by the tool\'s schema', async () => {
    const run = await runCli(['call', 'mcp__typed__show_args', 'text=42', 'count=3', 'ratio=0.5', 'loud=true', 'tags=["a","b c"]', 'limit=null', ...typed]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({ text: '42', count: 3, ratio: 0.5, loud: true, tags: ['a', 'b c'], limit: null });
  });

  it.each([
    [['count=three'], 'lazy-mcp: argument "count" must be a whole number, got "three"\n'],
    [['cont=3'], 'lazy-mcp: mcp__typed__show_args has no argument "cont"; did you mean count?\n'],
    [['colour=red'], 'lazy-mcp: mcp__typed__show_args has no argument "colour"; its arguments are text, count, ratio, loud, tags, limit\n'],
    [['text=a', 'text=b'], 'lazy-mcp: argument "text" is given twice\n'],
  ])('rejects %j with exit 2', async (pairs, stderr) => {
    const run = await runCli(['call', 'mcp__typed__show_args', ...pairs, ...typed]);
    expect(run).toMatchObject({ code: 2, stdout: '', stderr });
  });
});

describe('--timeout and --max-time', () => {
  it('--timeout is restarted by progress; --max-time bounds the whole call', async () => {
    const began = performance.now();
    const [progressing, capped] = await Promise.all([
      // 1.2 s of work reporting progress every 100 ms outlives a 600 ms --timeout.
      runCli(['call', 'mcp__echo__slow', 'ms=1200', 'interval=100', '--timeout', '600', ...echo]),
      runCli(['call', 'mcp__echo__slow', 'ms=20000', 'interval=100', '--timeout', '600', '--max-time', '1500', ...echo]),
    ]);
    expect(progressing).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(capped).toMatchObject({ code: 1, stdout: '' });
    expect(capped.stderr).toMatch(/^lazy-mcp: server "echo": tools\/call .*timed out after 1500 ms.*\n$/);
    // Far below the 20 s the tool would take: the cap held.
    expect(performance.now() - began).toBeLessThan(12_000);
  });
});

describe('exit statuses and --json errors', () => {
  it('exits 2 for a server name that does not exist', async () => {
    const run = await runCli(['read', 'nope', 'mem://x', ...echo]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^lazy-mcp: no server named "nope"/);
  });

  it('writes errors as one JSON line on stderr with --json, the exit status unchanged', async () => {
    const empty = scratchDir();
    try {
      const [unknown, usage, noConfig, failed] = await Promise.all([
        runCli(['call', 'mcp__echo__ech', '--json', ...echo]),
        runCli(['tools', '--json', '--bogus']),
        runCli(['tools', '--json'], { cwd: empty.path }),
        runCli(['call', 'mcp__echo__fail', 'why=disk full', '--json', ...echo]),
      ]);
      expect(unknown).toMatchObject({ code: 2, stdout: '' });
      expect(JSON.parse(unknown.stderr)).toEqual({ error: { code: 'unknown-tool', server: 'echo', phase: 'tools/call', message: expect.stringMatching(/no tool named "mcp__echo__ech"; did you mean mcp__echo__echo/) } });
      expect(usage).toMatchObject({ code: 2 });
      expect(JSON.parse(usage.stderr)).toEqual({ error: { code: 'usage', message: 'unknown option --bogus' } });
      expect(noConfig).toMatchObject({ code: 2 });
      expect(JSON.parse(noConfig.stderr).error).toMatchObject({ code: 'usage', message: expect.stringMatching(/^no config found; looked at /) });
      expect(failed).toMatchObject({ code: 1 });
      expect(JSON.parse(failed.stdout)).toMatchObject({ isError: true });
      expect(JSON.parse(failed.stderr)).toEqual({ error: { code: 'tool-error', message: 'mcp__echo__fail failed: disk full' } });
    } finally {
      empty.remove();
    }
  });
});

describe('colour', () => {
  it('is off when not on a terminal and on with FORCE_COLOR (NO_COLOR: see colour.test.ts)', async () => {
    const args = ['call', 'mcp__echo__nope', ...echo];
    const [none, forced, refused] = await Promise.all([runCli(args), runCli(args, { env: { FORCE_COLOR: '1' } }), runCli(args, { env: { FORCE_COLOR: '0' } })]);
    expect(none.stderr).toMatch(/^lazy-mcp: /);
    expect(forced.stderr).toMatch(/^\u001b\[31mlazy-mcp:\u001b\[39m server "echo": no tool named/);
    expect(refused.stderr).toBe(none.stderr);
    const table = await runCli(['tools', '--long', ...echo], { env: { FORCE_COLOR: '1' } });
    expect(table.stdout).toMatch(/^\u001b\[1mTOOL\s+SERVER\s+DESCRIPTION\u001b\[22m\n/);
  });
});

describe('a silent start under npx', () => {
  it('says npx may still be downloading the package', async () => {
    // A command named npx (this Node, by a symlink) running a server that says nothing.
    const npx = join(scratch.path, 'npx');
    symlinkSync(process.execPath, npx);
    const config = join(scratch.path, 'npx.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { pkg: { command: npx, args: [join(repoRoot, 'test/fixtures/silent-start.mjs')], timeout: 400 } } }));
    const run = await runCli(['call', 'mcp__pkg__anything', '--config', config]);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      'lazy-mcp: server "pkg": initialize timed out after 400 ms; the server did not finish starting; it printed nothing: npx may still be downloading the package (a first run, or offline without it in the cache); run the command once by hand, or raise the server\'s "timeout"\n',
    );
  });
});
