import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { safeEnvironment } from '../src/transport/stdio/child-env.js';
import { fixture, repoRoot } from './support/fixtures.js';
import { tempDir } from './support/temp-dirs.js';

// What a process loads is pinned here, not how long it takes: importing the package, and
// `lazy-mcp serve` answering `initialize`, load none of the heavy modules a feature needs
// only when it is used (issue 34; issue 25 item 19). A child reports every module file it
// loads through test/fixtures/module-recorder.mjs; the control run shows that the recorder
// does see each of them once the feature is used.

const recorder = resolve(repoRoot, 'test/fixtures/module-recorder.mjs');
const entry = pathToFileURL(resolve(repoRoot, 'dist/index.js')).href;
const cli = resolve(repoRoot, 'dist/cli/main.js');
const execFileAsync = promisify(execFile);

/** Loaded only by the feature that needs it: a spawn, a connection, a schema check, OAuth, telemetry, HTTP, JSONC, a hash. */
const HEAVY: Record<string, RegExp> = {
  execa: /\/node_modules\/execa\//,
  zod: /\/node_modules\/zod\//,
  ajv: /\/node_modules\/ajv\//,
  oauth4webapi: /\/node_modules\/oauth4webapi\//,
  '@opentelemetry/api': /\/node_modules\/@opentelemetry\/api\//,
  'jsonc-parser': /\/node_modules\/jsonc-parser\//,
  'eventsource-parser': /\/node_modules\/eventsource-parser\//,
  "vscode-jsonrpc's entry": /\/node_modules\/vscode-jsonrpc\/lib\/(node\/main|common\/(api|connection))\.js$/,
  'the OAuth client': /\/dist\/transport\/http\/oauth\/oauth-provider\.js$/,
  'the HTTP transports': /\/dist\/transport\/http\/(streamable-http|sse-legacy)\.js$/,
  ioredis: /\/node_modules\/ioredis\//,
  // Light, but the one package an import would otherwise resolve (util/deadline.ts).
  'p-timeout': /\/node_modules\/p-timeout\//,
  'the cluster code': /\/dist\/share\/cluster\//,
  // Node's own, each costlier to load than the package (util/lazy-builtins.ts).
  'node:crypto': /^node:crypto$/,
  'node:child_process': /^node:child_process$/,
  'node:http': /^node:http$/,
};

interface Run {
  code: number | null;
  stdout: string;
  loaded: string[];
  stderr: string;
}

/** Runs this Node with the recorder and `args` (safe environment); `input` to stdin, which stays open until `endWhen` holds for stdout. */
function runRecorded(args: string[], options: { input?: string; endWhen?: (stdout: string) => boolean; cwd?: string } = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', recorder, ...args], { cwd: options.cwd ?? repoRoot, env: safeEnvironment(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (options.endWhen?.(stdout)) child.stdin.end();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  if (options.input !== undefined) child.stdin.write(options.input);
  if (!options.endWhen) child.stdin.end();
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not exit within 30 s\nstdout: ${stdout}\nstderr: ${stderr.slice(-2000)}`));
    }, 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const loaded = stderr
        .split('\n')
        .filter((line) => line.startsWith('loaded '))
        .map((line) => line.slice('loaded '.length));
      resolvePromise({ code, stdout, stderr, loaded });
    });
  });
}

/**
 * The package is loaded as bundles (scripts/build.mjs): a loaded bundle or chunk stands for
 * every source module it holds, named as tsc's output of it (`dist/<path>.js`) so that one
 * pattern reads both ways.
 */
const bundleModules = JSON.parse(readFileSync(resolve(repoRoot, 'dist/bundle-modules.json'), 'utf8')) as Record<string, string[]>;
function modulesOf(url: string): string[] {
  const held = bundleModules[url.slice(pathToFileURL(repoRoot).href.length + 1)];
  return held?.map((source) => pathToFileURL(resolve(repoRoot, source.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'))).href) ?? [url];
}

/** Which of {@link HEAVY} a run loaded. */
const heavyIn = (loaded: readonly string[]) => Object.keys(HEAVY).filter((name) => loaded.flatMap(modulesOf).some((url) => HEAVY[name].test(url)));

it('importing the package and constructing a manager loads none of the heavy modules', async () => {
  const echo = fixture('echo-server.mjs');
  const script = `
    const { McpServerManager } = await import(${JSON.stringify(entry)});
    const manager = McpServerManager.fromConfig({ mcpServers: { echo: ${JSON.stringify({ command: echo.command, args: echo.args })} } });
    console.log(JSON.stringify(Object.keys(manager.status())));
    await manager.shutdown();
  `;
  const run = await runRecorded(['--input-type=module', '-e', script]);
  expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: '["echo"]' });
  expect(run.loaded.some((url) => url.endsWith('/dist/index.js'))).toBe(true);
  expect(heavyIn(run.loaded)).toEqual([]);
}, 40_000);

it("importing the package and constructing a manager load none of Node's streams (an ESM import of node:fs would)", async () => {
  // Without the recorder, whose loader thread brings streams of its own; asked before
  // anything is written, since writing to a pipe loads them too.
  const script = `
    const { McpServerManager } = await import(${JSON.stringify(entry)});
    const manager = McpServerManager.fromConfig({ mcpServers: { echo: { command: 'echo-never-started' } } });
    const streams = process.moduleLoadList.filter((name) => /^NativeModule (stream|internal\\/fs\\/streams)$/.test(name));
    console.log(JSON.stringify(streams));
    await manager.shutdown();
  `;
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, env: safeEnvironment(), timeout: 30_000 });
  expect(JSON.parse(stdout)).toEqual([]);
}, 40_000);

it('a manager given `cluster` loads neither the cluster code nor the Redis client at construction (it joins on first need)', async () => {
  const echo = fixture('echo-server.mjs');
  const script = `
    const { McpServerManager } = await import(${JSON.stringify(entry)});
    const manager = McpServerManager.fromConfig(
      { mcpServers: { echo: ${JSON.stringify({ command: echo.command, args: echo.args })} } },
      { cluster: { redis: 'redis://127.0.0.1:1', advertise: 'http://127.0.0.1:1', secret: 'x'.repeat(32) } },
    );
    console.log(JSON.stringify(Object.keys(manager.status())));
    await manager.shutdown();
  `;
  const run = await runRecorded(['--input-type=module', '-e', script]);
  expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: '["echo"]' });
  expect(heavyIn(run.loaded)).toEqual([]);
}, 40_000);

it('the recorder sees them once used: a call loads execa (and node:child_process), zod and ajv; a JSONC config loads jsonc-parser', async () => {
  const echo = fixture('echo-server.mjs');
  const dir = tempDir();
  const config = join(dir, 'mcp.jsonc');
  writeFileSync(config, `{ // a comment: not plain JSON\n "mcpServers": { "echo": ${JSON.stringify({ command: echo.command, args: echo.args })}, }, }`);
  const script = `
    const { McpServerManager } = await import(${JSON.stringify(entry)});
    const manager = McpServerManager.fromFile(${JSON.stringify(config)});
    try {
      const result = await manager.callTool('mcp__echo__echo', { text: 'hi' });
      console.log(result.content[0].text);
    } finally {
      await manager.shutdown();
    }
  `;
  const run = await runRecorded(['--input-type=module', '-e', script]);
  expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: 'hi' });
  expect(heavyIn(run.loaded)).toEqual(expect.arrayContaining(['execa', 'zod', 'ajv', 'jsonc-parser', 'node:child_process', 'p-timeout']));
  expect(heavyIn(run.loaded)).not.toContain("vscode-jsonrpc's entry");
}, 40_000);

it('lazy-mcp serve answers initialize without spawning, validating schemas or loading OAuth', async () => {
  const echo = fixture('echo-server.mjs');
  const dir = tempDir();
  const config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: echo.command, args: echo.args } } }));
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  const run = await runRecorded([cli, 'serve', '--config', config], { input: `${JSON.stringify(initialize)}\n`, endWhen: (out) => out.includes('\n'), cwd: dir });
  expect(run.code).toBe(0);
  const answer = JSON.parse(run.stdout.split('\n')[0]) as { id: number; result?: { serverInfo?: { name: string } } };
  expect({ id: answer.id, server: answer.result?.serverInfo?.name }).toEqual({ id: 1, server: 'lazy-mcp' });
  expect(run.loaded.flatMap(modulesOf).some((url) => url.endsWith('/dist/gateway/gateway-server.js'))).toBe(true);
  expect(heavyIn(run.loaded)).toEqual([]);
}, 40_000);
