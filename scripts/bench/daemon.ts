import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClient } from '../../src/index.js';
import { daemonStatus, stopDaemon } from '../../src/share/daemon/control.js';
import { signalGroup } from '../../src/transport/stdio/process-group.js';
import type { Plan } from './plan.js';
import { Figure, type Metric } from './runs.js';
import { fixturePath, fixtureServer, packageVersion, repoRoot } from './setup.js';
import { now, quantile, since } from './stats.js';

export const SHARED = 'serve, shared (daemon)';
export const OWN = 'serve --no-shared';
/** serve --no-shared with a Node process between it and the server that only copies bytes: the least any relay process on the path costs. */
export const FLOOR = 'serve --no-shared through a byte copier';
/** The copier: the server's command line after `-e`; stdio copied both ways, nothing parsed. */
const COPY = `const c = require('node:child_process').spawn(process.execPath, process.argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (b) => c.stdin.write(b)); c.stdout.on('data', (b) => process.stdout.write(b));
process.stdin.on('end', () => c.stdin.end()); c.on('exit', (code) => process.exit(code ?? 1));`;
const cli = join(repoRoot, 'dist/cli/main.js');
/** Given, not looked up: this module runs from dist-bench/, which has no package.json of its own. */
const version = packageVersion('package.json');

/**
 * Figure 11: `lazy-mcp serve` through the pool daemon against `--no-shared`: processes
 * and memory of many sessions with one config, a call's latency and throughput through
 * the extra hop, and the time from a serve's start to its first answer.
 */
export async function daemonFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const figure = new Figure(11)
    .define('daemon-procs', `${plan.daemonClients} serve sessions × 3 servers, each called: server processes`, 'count', 'lower')
    .define('daemon-rss', `${plan.daemonClients} serve sessions × 3 servers: RSS of serve, daemon and server processes`, 'bytes', 'lower')
    .define('daemon-p50', 'one echo call through serve, sequential: p50', 'ms', 'lower')
    .define('daemon-inflight', `echo calls through serve, ${plan.inflight} in flight`, 'calls/s', 'higher')
    .define('daemon-start', 'serve start → first answer (tools/call): daemon and server already running', 'ms', 'lower')
    .define('daemon-start-cold', 'serve start → first answer (tools/call): starting the daemon and the server', 'ms', 'lower');
  const work = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-daemon-'));
  const runtimeDirs: string[] = [];
  const runtime = () => {
    const dir = mkdtempSync(join(work, 'rt-'));
    runtimeDirs.push(dir);
    return dir;
  };
  const server = fixtureServer('bench-echo-server.mjs');
  // Three entries that differ (in env): three fingerprints, three processes per pool.
  const config = join(work, 'three.json');
  writeFileSync(config, JSON.stringify({ mcpServers: Object.fromEntries([0, 1, 2].map((i) => [`s${i}`, { ...server, env: { ...server.env, BENCH_SLOT: String(i) } }])) }));
  // The floor's config: the first server only, behind the copier.
  const copying = join(work, 'copying.json');
  writeFileSync(copying, JSON.stringify({ mcpServers: { s0: { ...server, env: { ...server.env, BENCH_SLOT: '0' }, args: ['-e', COPY, ...server.args] } } }));
  const serve = (dir: string, shared: boolean, through = config) =>
    McpClient.connect(
      { command: process.execPath, args: [cli, 'serve', '--config', through, ...(shared ? [] : ['--no-shared'])], env: { LAZY_MCP_RUNTIME_DIR: dir, LAZY_MCP_DAEMON_IDLE_MS: '120000' } },
      { name: 'serve', timeout: 60_000 },
    );
  const echo = (c: McpClient, slot = 0) => c.callTool(`mcp__s${slot}__echo`, { text: 'x' });
  try {
    for (const shared of [true, false]) {
      const variant = shared ? SHARED : OWN;
      log(`figure 11: ${plan.daemonClients} ${variant} sessions`);
      const dir = runtime();
      const clients = await Promise.all(Array.from({ length: plan.daemonClients }, () => serve(dir, shared)));
      try {
        await Promise.all(clients.flatMap((c) => [0, 1, 2].map((slot) => echo(c, slot))));
        const servers = fixtureProcesses();
        const daemon = shared ? (await daemonStatus({ runtimeDir: dir, version }))?.pid : undefined;
        const pids = [...clients.map((c) => c.pid), ...servers, ...(daemon === undefined ? [] : [daemon])];
        figure.record('daemon-procs', variant, servers.length);
        figure.record('daemon-rss', variant, pids.reduce((sum, pid) => sum + rssOf(pid), 0));
      } finally {
        await Promise.all(clients.map((c) => c.close()));
        await stopDaemon({ runtimeDir: dir, version });
      }
    }

    log(`figure 11: latency and throughput, ${plan.daemonRounds} alternating rounds`);
    const dir = runtime();
    // The floor is timed sequentially only: it shows how much of the shared call's p50 any process in the daemon's place would add.
    const pair: Record<string, McpClient> = { [SHARED]: await serve(dir, true), [OWN]: await serve(dir, false), [FLOOR]: await serve(dir, false, copying) };
    try {
      for (const c of Object.values(pair)) for (let i = 0; i < 50; i++) await echo(c);
      for (let round = 0; round < plan.daemonRounds; round++) {
        for (const [variant, c] of round % 2 === 0 ? Object.entries(pair) : Object.entries(pair).reverse()) {
          const times: number[] = [];
          for (let i = 0; i < plan.daemonCalls; i++) {
            const t = now();
            await echo(c);
            times.push(since(t));
          }
          figure.record('daemon-p50', variant, quantile(times.sort((a, b) => a - b), 0.5));
          if (variant !== FLOOR) figure.record('daemon-inflight', variant, await callsPerSecond(c, plan.inflight, plan.daemonCalls * 4));
        }
      }
    } finally {
      await Promise.all(Object.values(pair).map((c) => c.close()));
    }

    log(`figure 11: serve start → first answer, ${plan.daemonRounds} runs each`);
    const keeper = await serve(dir, true); // keeps the daemon and s0 running
    try {
      await echo(keeper);
      for (let round = 0; round < plan.daemonRounds; round++) {
        for (const [id, variant, where] of [['daemon-start', SHARED, dir], ['daemon-start', OWN, dir], ['daemon-start-cold', SHARED, runtime()]] as const) {
          const t = now();
          const c = await serve(where, variant === SHARED);
          await echo(c);
          figure.record(id, variant, since(t));
          await c.close();
          if (id === 'daemon-start-cold') await stopDaemon({ runtimeDir: where, version });
        }
      }
    } finally {
      await keeper.close();
    }
  } finally {
    await Promise.all(runtimeDirs.map((runtimeDir) => stopDaemon({ runtimeDir, version }).catch(() => undefined)));
    // A daemon outlives its clients by design: one the stops above could not reach (a run
    // cut short on a loaded machine) is ended here, so the bench leaves nothing behind.
    for (const pid of processesMentioning(work)) signalGroup(pid, 'SIGKILL');
    rmSync(work, { recursive: true, force: true });
  }
  return figure.list();
}

async function callsPerSecond(client: McpClient, inflight: number, calls: number): Promise<number> {
  let sent = 0;
  const t = now();
  const lane = async () => {
    while (sent < calls) {
      sent++;
      await client.callTool('mcp__s0__echo', { text: 'x' });
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
  return calls / (since(t) / 1000);
}

/** Live processes of the bench's fixture copy (the servers, whoever started them). */
function fixtureProcesses(): number[] {
  return processesMentioning(fixturePath('bench-echo-server.mjs'));
}

/** Live processes whose command line mentions `marker`. */
function processesMentioning(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

function rssOf(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
