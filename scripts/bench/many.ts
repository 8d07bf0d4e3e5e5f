import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServerManager } from '../../src/index.js';
import { BarePipe } from './bare-pipe.js';
import { poolConfig, spawnedCount } from './clients.js';
import type { Plan } from './plan.js';
import { collect, sleep } from './procs.js';
import { Figure, type Metric } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, since } from './stats.js';

/** Figure 5: many configured servers, nearly all idle: construction, a cached listing, memory. */
export async function manyFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const server = fixtureServer('bench-echo-server.mjs');
  const n = plan.configuredServers;
  const figure = new Figure(5)
    .define('construct', `${n} servers configured: fromConfig`, 'ms', 'lower')
    .define('construct-cpu', `${n} servers configured: fromConfig, host CPU time (user + system)`, 'ms', 'lower')
    .define('construct-spawned', `${n} servers configured: processes spawned by construction`, 'count', 'lower')
    .define('cached-list', `${plan.cachedServers} servers: listTools from a warm manifest cache, fresh manager`, 'ms', 'lower')
    .define('cached-cpu', `${plan.cachedServers} servers: the cached listing's host CPU time (user + system)`, 'ms', 'lower')
    .define('cached-spawned', `${plan.cachedServers} servers: processes spawned by the cached listing`, 'count', 'lower')
    .define('idle-bytes', `host heap per configured idle server (${plan.idleServers} configured)`, 'bytes', 'lower')
    .define('live-heap', `host heap per live connection (${plan.liveServers} ready)`, 'bytes', 'lower')
    .define('live-rss', `host RSS per live connection (${plan.liveServers} ready)`, 'bytes', 'lower');

  log(`figure 5: construction of ${n} servers, ${plan.constructRounds} runs`);
  const config = poolConfig(n, () => server);
  McpServerManager.fromConfig(config); // warm-up
  for (let round = 0; round < plan.constructRounds; round++) {
    collect();
    const cpu = process.cpuUsage();
    const start = now();
    const m = McpServerManager.fromConfig(config);
    const ms = since(start);
    figure.record('construct', 'manager', ms);
    figure.record('construct-cpu', 'manager', cpuMs(cpu));
    figure.record('construct-spawned', 'manager', spawnedCount(m));
    await m.shutdown();
  }

  const cacheDir = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-many-'));
  try {
    const cachedConfig = poolConfig(plan.cachedServers, () => server);
    log(`figure 5: filling a manifest cache of ${plan.cachedServers} servers (starts them once)`);
    const filler = McpServerManager.fromConfig(cachedConfig, { cacheDir });
    try {
      await filler.listTools();
    } finally {
      await filler.shutdown();
    }
    await waitForFiles(cacheDir, plan.cachedServers);
    for (let round = 0; round < plan.cachedRounds; round++) {
      collect();
      const m = McpServerManager.fromConfig(cachedConfig, { cacheDir });
      try {
        const cpu = process.cpuUsage();
        const start = now();
        const tools = await m.listTools();
        figure.record('cached-list', 'manager', since(start));
        figure.record('cached-cpu', 'manager', cpuMs(cpu));
        figure.record('cached-spawned', 'manager', spawnedCount(m));
        if (tools.length !== plan.cachedServers * 2) throw new Error(`the cached listing has ${tools.length} tools, not ${plan.cachedServers * 2}`);
      } finally {
        await m.shutdown();
      }
    }
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }

  log(`figure 5: memory of ${plan.idleServers} idle servers and ${plan.liveServers} live connections, ${plan.memoryRounds} runs`);
  const idleConfig = poolConfig(plan.idleServers, () => server);
  // Every manager stays alive until all are weighed: one shut down just before would be
  // collected during the next one's weighing and hide it.
  const idle: McpServerManager[] = [];
  try {
    for (let round = -1; round < plan.memoryRounds; round++) {
      await settled();
      const before = process.memoryUsage().heapUsed;
      idle.push(McpServerManager.fromConfig(idleConfig));
      await settled();
      // Round -1 only warms up (code, shapes, caches), so the rounds weigh the servers alone.
      if (round >= 0) figure.record('idle-bytes', 'manager', (process.memoryUsage().heapUsed - before) / plan.idleServers);
    }
  } finally {
    await Promise.all(idle.map((m) => m.shutdown()));
  }
  const liveConfig = poolConfig(plan.liveServers, () => server);
  for (let round = 0; round < plan.memoryRounds; round++) {
    const m = McpServerManager.fromConfig(liveConfig);
    await settled();
    const before = process.memoryUsage();
    await m.listTools();
    collect();
    const after = process.memoryUsage();
    figure.record('live-heap', 'manager', (after.heapUsed - before.heapUsed) / plan.liveServers);
    figure.record('live-rss', 'manager', (after.rss - before.rss) / plan.liveServers);

    // The manager stays up while the bare pipes are weighed (freeing it would hide them).
    await settled();
    const bareBefore = process.memoryUsage();
    const pipes = await Promise.all(Array.from({ length: plan.liveServers }, () => BarePipe.connect(server)));
    collect();
    const bareAfter = process.memoryUsage();
    figure.record('live-heap', 'bare', (bareAfter.heapUsed - bareBefore.heapUsed) / plan.liveServers);
    figure.record('live-rss', 'bare', (bareAfter.rss - bareBefore.rss) / plan.liveServers);
    await Promise.all([...pipes.map((p) => p.close()), m.shutdown()]);
    await settled();
  }
  return figure.list();
}

/** Host CPU time (user + system, all threads) since `from`, in ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}

/** Lets what earlier figures left pending (closes, file handles) finish, then collects everything. */
async function settled(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  collect();
}

/** Waits until the cache holds `count` entries. */
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
