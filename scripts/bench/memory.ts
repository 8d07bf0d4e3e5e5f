import { McpServerManager } from '../../src/index.js';
import { bare, type Conn, poolConfig, sdk } from './clients.js';
import type { Plan } from './plan.js';
import { collect } from './procs.js';
import { alternate, Figure, type Metric } from './runs.js';
import { fixtureServer } from './setup.js';

const ARGS = { text: 'hello' };

/**
 * Figure 8, calls: host memory growth over many calls on one warm connection, in
 * batches in flight. lazy-mcp is measured through the manager, the whole stack a chat
 * app uses. Memory is read after a full GC (the bench runs with --expose-gc), so what
 * is left is what the calls kept: a leak shows as growth that does not go away.
 */
export async function memoryFigure(plan: Plan, log: (text: string) => void): Promise<{ metrics: Metric[]; gc: boolean }> {
  const server = fixtureServer('bench-echo-server.mjs');
  const k = plan.memoryCalls >= 1000 ? `${plan.memoryCalls / 1000}k` : String(plan.memoryCalls);
  const figure = new Figure(8)
    .define('mem-rss', `host RSS growth over ${k} calls (batches of ${plan.memoryBatch})`, 'MiB', 'none')
    .define('mem-heap', `host heap growth over ${k} calls (batches of ${plan.memoryBatch})`, 'MiB', 'none');
  const manager = McpServerManager.fromConfig(poolConfig(1, () => server, 'echo'));
  const conns = new Map<string, Conn>();
  try {
    conns.set('lazy-mcp', {
      pid: 0,
      call: (_tool, args) => manager.callTool('mcp__echo0__echo', args),
      listTools: () => manager.listTools(),
      close: () => manager.shutdown(),
    });
    conns.set('sdk', await sdk.connect(server));
    conns.set('bare', await bare.connect(server));
    for (const conn of conns.values()) await batches(conn, Math.max(1000, plan.memoryCalls / 10), plan.memoryBatch);
    log(`figure 8: ${plan.memoryCalls} calls per run, ${plan.memoryRounds} runs`);
    await alternate(
      plan.memoryRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          collect();
          const before = process.memoryUsage();
          await batches(conn, plan.memoryCalls, plan.memoryBatch);
          collect();
          const after = process.memoryUsage();
          figure.record('mem-rss', name, (after.rss - before.rss) / 2 ** 20);
          figure.record('mem-heap', name, (after.heapUsed - before.heapUsed) / 2 ** 20);
        },
      })),
      log,
    );
  } finally {
    await Promise.all([...conns.values()].map((c) => c.close()));
    await manager.shutdown();
  }
  return { metrics: figure.list(), gc: collect() };
}

async function batches(conn: Conn, count: number, size: number): Promise<void> {
  for (let done = 0; done < count; done += size) {
    await Promise.all(Array.from({ length: Math.min(size, count - done) }, () => conn.call('echo', ARGS)));
  }
}
