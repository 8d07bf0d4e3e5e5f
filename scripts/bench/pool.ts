import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServerManager } from '../../src/index.js';
import { bare, type Conn, type Impl, poolConfig, sdk, spawnedCount } from './clients.js';
import type { Plan } from './plan.js';
import { collect, cpuMs, hostRss, isGone, rssKiB, sleep } from './procs.js';
import { alternate, Figure, type Metric, type Variant } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, since } from './stats.js';

/**
 * Figure 6: listing the tools of many servers that are slow to start. lazy-mcp's
 * `listTools()` starts them in parallel; the peers are given the same parallel start (a
 * stronger baseline than the in-turn connect of figure 5). Then a fresh manager lists
 * from the manifest cache the cold run wrote, and must spawn nothing.
 */
export async function listingFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const n = plan.slowServers;
  const slow = (i: number) => fixtureServer('slow-init.mjs', String(plan.slowInitMs), `s${i}`);
  const figure = new Figure(6)
    .define('list-one', `one server that takes ${plan.slowInitMs} ms to initialize: start + list tools`, 'ms', 'lower')
    .define('list-many', `${n} such servers: start all + list tools (cold)`, 'ms', 'lower')
    .define('list-cached', `${n} such servers: list tools from the manifest cache, fresh manager`, 'ms', 'lower')
    .define('list-cached-spawned', `${n} such servers: processes spawned by the cached listing`, 'count', 'lower')
    .define('list-child-cpu', `${n} such servers: CPU time of one server's start (user + system)`, 'ms', 'none');
  const scratch = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-'));
  let dirs = 0;
  const freshCacheDir = () => join(scratch, `cache-${dirs++}`);

  const lazyList = async (count: number, id: string): Promise<void> => {
    const cacheDir = freshCacheDir();
    const manager = McpServerManager.fromConfig(poolConfig(count, slow), { cacheDir });
    try {
      const start = now();
      const tools = await manager.listTools();
      figure.record(id, 'lazy-mcp', since(start));
      if (tools.length !== count) throw new Error(`lazy-mcp listed ${tools.length} tools of ${count} servers`);
      if (id === 'list-many') figure.record('list-child-cpu', 'lazy-mcp', meanCpu(Object.values(manager.status()).map((s) => s.pid!)));
      if (id === 'list-many') await waitForFiles(cacheDir, count);
    } finally {
      await manager.shutdown();
    }
    if (id !== 'list-many') return;
    const cached = McpServerManager.fromConfig(poolConfig(count, slow), { cacheDir });
    try {
      const start = now();
      const tools = await cached.listTools();
      figure.record('list-cached', 'lazy-mcp', since(start));
      figure.record('list-cached-spawned', 'lazy-mcp', spawnedCount(cached));
      if (tools.length !== count) throw new Error(`the cached listing has ${tools.length} tools, not ${count}`);
      if (!Object.values(cached.status()).every((s) => s.state === 'idle' && s.pid === undefined)) throw new Error('the cached listing started a server');
    } finally {
      await cached.shutdown();
    }
  };
  const peerList = async (impl: Impl, count: number, id: string): Promise<void> => {
    const conns: Conn[] = [];
    try {
      const start = now();
      const lists = await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const conn = await impl.connect(slow(i));
          conns.push(conn);
          return conn.listTools();
        }),
      );
      figure.record(id, impl.name, since(start));
      if (id === 'list-many') figure.record('list-child-cpu', impl.name, meanCpu(conns.map((c) => c.pid)));
      if (lists.flat().length !== count) throw new Error(`${impl.name} listed ${lists.flat().length} tools of ${count} servers`);
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  };
  const variants: Variant[] = [
    { name: 'lazy-mcp one', run: () => lazyList(1, 'list-one') },
    { name: 'sdk one', run: () => peerList(sdk, 1, 'list-one') },
    { name: 'bare one', run: () => peerList(bare, 1, 'list-one') },
    { name: 'lazy-mcp many', run: () => lazyList(n, 'list-many') },
    { name: 'sdk many', run: () => peerList(sdk, n, 'list-many') },
    { name: 'bare many', run: () => peerList(bare, n, 'list-many') },
  ];
  log(`figure 6: ${n} servers of ${plan.slowInitMs} ms, ${plan.listRounds} runs`);
  try {
    await alternate(plan.listRounds, variants, log);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return figure.list();
}

/** Mean CPU time used so far by the processes `pids`, in ms. */
function meanCpu(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + cpuMs(pid), 0) / pids.length;
}

/** Waits until the cache holds `count` entries (a start writes them in the background). */
async function waitForFiles(dir: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    } catch {
      // not created yet
    }
    if (files.length >= count) return;
    if (Date.now() > deadline) throw new Error(`the manifest cache has ${files.length} of ${count} entries after 10 s`);
    await sleep(10);
  }
}

/**
 * Figure 7 and the per-server half of figure 8: shutting down many ready servers, and
 * one that ignores stdin closing and SIGTERM; memory of a ready server (its own RSS, and
 * what it adds to the host).
 */
export async function shutdownFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const n = plan.shutdownServers;
  const echo = fixtureServer('bench-echo-server.mjs');
  const stubborn = fixtureServer('bench-stubborn-server.mjs');
  const figure = new Figure(7)
    .define('shutdown-many', `shutdown of ${n} ready servers`, 'ms', 'lower')
    .define('shutdown-stubborn', 'shutdown of one server that ignores stdin EOF and SIGTERM (lazy-mcp: shutdownGraceMs 2000)', 'ms', 'lower');
  const memory = new Figure(8)
    .define('server-rss', 'RSS of one ready server process (VmRSS)', 'MiB', 'none')
    .define('host-per-server', 'host RSS added per ready server', 'MiB', 'none');

  const lazyMany: Variant = {
    name: 'lazy-mcp many',
    run: async () => {
      const manager = McpServerManager.fromConfig(poolConfig(n, () => echo));
      collect();
      const before = hostRss();
      await manager.listTools();
      const pids = Object.values(manager.status()).map((s) => s.pid!);
      if (pids.length !== n || pids.some((p) => p === undefined)) throw new Error(`lazy-mcp: ${pids.length} of ${n} servers ready`);
      collect();
      memory.record('host-per-server', 'lazy-mcp', (hostRss() - before) / n / 2 ** 20);
      memory.record('server-rss', 'lazy-mcp', pids.reduce((sum, pid) => sum + rssKiB(pid), 0) / n / 1024);
      const start = now();
      await manager.shutdown();
      figure.record('shutdown-many', 'lazy-mcp', since(start));
      assertGone('lazy-mcp', pids);
    },
  };
  const peerMany = (impl: Impl): Variant => ({
    name: `${impl.name} many`,
    run: async () => {
      collect();
      const before = hostRss();
      const conns = await Promise.all(Array.from({ length: n }, () => impl.connect(echo)));
      collect();
      memory.record('host-per-server', impl.name, (hostRss() - before) / n / 2 ** 20);
      memory.record('server-rss', impl.name, conns.reduce((sum, c) => sum + rssKiB(c.pid), 0) / n / 1024);
      const start = now();
      await Promise.all(conns.map((c) => c.close()));
      figure.record('shutdown-many', impl.name, since(start));
      assertGone(impl.name, conns.map((c) => c.pid));
    },
  });
  log(`figure 7: shutdown of ${n} ready servers, ${plan.shutdownRounds} runs`);
  await alternate(plan.shutdownRounds, [lazyMany, peerMany(sdk), peerMany(bare)], log);

  const lazyStubborn: Variant = {
    name: 'lazy-mcp stubborn',
    run: async () => {
      const manager = McpServerManager.fromConfig(poolConfig(1, () => stubborn));
      await manager.callTool('mcp__s0__echo', { text: 'x' });
      const pid = manager.status().s0.pid!;
      const start = now();
      await manager.shutdown();
      figure.record('shutdown-stubborn', 'lazy-mcp', since(start));
      assertGone('lazy-mcp', [pid]);
    },
  };
  const sdkStubborn: Variant = {
    name: 'sdk stubborn',
    rounds: plan.sdkStubbornRounds,
    run: async () => {
      const conn = await sdk.connect(stubborn);
      const start = now();
      await conn.close();
      // The SDK's close resolves when the child closes or after its last SIGKILL; wait for the exit to be fair.
      while (!isGone(conn.pid)) await sleep(5);
      figure.record('shutdown-stubborn', 'sdk', since(start));
    },
  };
  log(`figure 7: a stubborn server, ${plan.stubbornRounds} runs (the SDK: ${plan.sdkStubbornRounds})`);
  await alternate(plan.stubbornRounds, [lazyStubborn, sdkStubborn], log);
  return [...figure.list(), ...memory.list()];
}

function assertGone(name: string, pids: number[]): void {
  const left = pids.filter((pid) => !isGone(pid));
  if (left.length > 0) throw new Error(`${name}: server process(es) ${left.join(', ')} outlived the shutdown`);
}
