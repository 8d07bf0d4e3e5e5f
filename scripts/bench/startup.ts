import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plan } from './plan.js';
import { alternate, Figure, type Metric, type Variant } from './runs.js';
import { fixtureServer, repoRoot } from './setup.js';
import { now, since } from './stats.js';

export const NODE_ALONE = 'node -e 0';
export const IMPORT_OURS = 'import lazy-mcp';
export const FRESH_NO_SCAVENGE = 'manager, young generation pre-sized (no scavenge)';
export const IMPORT_SDK2 = 'import sdk v2 client';
export const SERVE_FIRST = 'serve: first answer';
export const TOOLS_WARM = 'tools, warm cache';

/**
 * What every child of this figure gets: PATH, HOME and LANG, nothing else. The host's
 * environment may hold costly variables (a large NODE_EXTRA_CA_CERTS adds ~80 ms to every
 * Node start here) that would swamp what is measured.
 */
const minimalEnv = (): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
};

/**
 * Figure 10: start-up, each a fresh process with a minimal environment, wall time from
 * the spawn: Node alone (`node -e 0`), an import of the package by its name (`dist/`, as
 * users get it) and of the SDK v2 client, `lazy-mcp serve`'s answer to `initialize` on
 * stdio (one echo server configured, a warm manifest cache; the answer needs no spawn),
 * and `lazy-mcp tools` from a warm cache until it exits; beside them, the first construction
 * of many servers in a fresh process (figure 5 has it warmed). The variants alternate run by run.
 */
export async function startupFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const n = plan.configuredServers;
  const figure = new Figure(10)
    .define('startup', 'start-up: a fresh process with a minimal environment, wall time', 'ms', 'lower')
    .define('construct-fresh', `${n} servers configured: fromConfig, the first in a fresh process (after the import)`, 'ms', 'lower');
  const dir = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-startup-'));
  const cacheDir = join(dir, 'cache');
  const config = join(dir, 'mcp.json');
  const server = fixtureServer('bench-echo-server.mjs');
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: server.command, args: server.args } } }));
  const cli = join(repoRoot, 'dist/cli/main.js');
  const env = minimalEnv();

  /** Runs `args` under this Node until it exits; resolves to the wall time (ms). */
  const untilExit = (args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const start = now();
      const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => {
        const ms = since(start);
        if (code === 0) resolve(ms);
        else reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(0, 500)}`));
      });
    });

  /** `lazy-mcp serve`: wall time until its answer to `initialize`; then stdin is closed and its exit awaited (not timed). */
  const serveFirstAnswer = () =>
    new Promise<number>((resolve, reject) => {
      const start = now();
      const child = spawn(process.execPath, [cli, 'serve', '--config', config, '--cache-dir', cacheDir], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let answered: number | undefined;
      let out = '';
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => {
        if (answered !== undefined) return;
        out += chunk.toString();
        if (!out.includes('\n')) return;
        answered = since(start);
        if (!out.includes('"serverInfo"')) reject(new Error(`serve answered ${out.slice(0, 300)}`));
        child.stdin.end();
      });
      child.on('error', reject);
      child.on('exit', (code) => (answered !== undefined && code === 0 ? resolve(answered) : reject(new Error(`serve exited ${code} before answering: ${stderr.slice(0, 500)}`))));
      const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };
      child.stdin.write(`${JSON.stringify(initialize)}\n`);
    });

  /**
   * A fresh process imports the package, then times its first construction of `n` servers
   * (and reports it on stdout). `nodeFlags`: the pre-sized young generation of the second
   * variant, whose construction no scavenge interrupts: where a fresh process's first
   * scavenges fall (before the construction or in it) depends on what the import allocated.
   */
  const constructFresh = (nodeFlags: string[] = []) =>
    new Promise<number>((resolve, reject) => {
      const servers = Object.fromEntries(Array.from({ length: n }, (_, i) => [`echo${i}`, { command: server.command, args: server.args }]));
      const script = [
        "const { McpServerManager } = await import('lazy-mcp');",
        `const config = { mcpServers: ${JSON.stringify(servers)} };`,
        'const start = process.hrtime.bigint();',
        'const manager = McpServerManager.fromConfig(config);',
        'const ms = Number(process.hrtime.bigint() - start) / 1e6;',
        "if (Object.values(manager.status()).some((s) => s.pid !== undefined)) throw new Error('spawned');",
        'await manager.shutdown();',
        'console.log(ms);',
      ].join('\n');
      const child = spawn(process.execPath, [...nodeFlags, '--input-type=module', '-e', script], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 && Number.isFinite(Number(out)) ? resolve(Number(out)) : reject(new Error(`construction child exited ${code}: ${stderr.slice(0, 500)}`))));
    });

  const timed = (name: string, run: () => Promise<number>): Variant => ({ name, run: async () => figure.record('startup', name, await run()) });
  const variants = [
    timed(NODE_ALONE, () => untilExit(['-e', '0'])),
    timed(IMPORT_OURS, () => untilExit(['--input-type=module', '-e', "await import('lazy-mcp')"])),
    timed(IMPORT_SDK2, () => untilExit(['--input-type=module', '-e', "await import('@modelcontextprotocol/client')"])),
    timed(SERVE_FIRST, serveFirstAnswer),
    timed(TOOLS_WARM, () => untilExit([cli, 'tools', '--config', config, '--cache-dir', cacheDir])),
    { name: 'manager', run: async () => figure.record('construct-fresh', 'manager', await constructFresh()) },
    { name: FRESH_NO_SCAVENGE, run: async () => figure.record('construct-fresh', FRESH_NO_SCAVENGE, await constructFresh(['--min-semi-space-size=64'])) },
  ];
  try {
    log(`figure 10: start-up, ${plan.startupRounds} rounds of ${variants.length} fresh processes`);
    for (const variant of variants) await variant.run(-1); // warm-up: the OS's file cache, and the manifest cache
    for (const metric of figure.list()) for (const runs of Object.values(metric.runs)) runs.length = 0;
    await alternate(plan.startupRounds, variants, log);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figure.list();
}
