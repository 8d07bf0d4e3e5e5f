import { bare, client, type Conn, type Impl, manager, principal, session } from './clients.js';
import type { Placement } from './placement.js';
import type { Plan } from './plan.js';
import { collect } from './procs.js';
import { Figure, type Metric } from './runs.js';
import { now, quantile, since } from './stats.js';
import { closeAll, connectAll } from './throughput.js';

const ARGS = { text: 'hello' };
// `principal`: a principal's session over a server run per principal, beside the plain `session`.
export const LATENCY_IMPLS: readonly Impl[] = [bare, manager, session, principal, client];

/**
 * Figure 2: warm sequential calls, the clients alternating in one process block by
 * block (the order rotating each round), each on its own child, host and children on
 * the same CPU. Separate processes swing 2× between runs on this VM; blocks interleaved
 * over the same seconds see the same machine. p50/p99 are over every call of a client
 * (pooled), and each block's p50 ratio to the bare pipe's block of the same round is kept.
 */
export async function latencyFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const conns = await connectAll(LATENCY_IMPLS, where);
  try {
    const figure = new Figure(2)
      .define('seq-p50', 'sequential call: p50 latency over all blocks', 'µs', 'lower')
      .define('seq-p99', 'sequential call: p99 latency over all blocks', 'µs', 'lower')
      .define('seq-block-p50', `sequential call: p50 of one block of ${plan.blockCalls}`, 'µs', 'lower')
      .define('seq-pair-ratio', 'sequential call: block p50 ÷ the bare block of the same round', 'x', 'none');
    const entries = [...conns];
    for (const [, conn] of entries) await block(conn, Math.max(500, plan.blockCalls)); // JIT warm-up
    const all = new Map<string, number[]>(entries.map(([name]) => [name, []]));
    log(`figure 2: ${plan.latencyBlocks} blocks of ${plan.blockCalls} sequential calls per client, ${entries.length} clients alternating`);
    collect();
    for (let round = 0; round < plan.latencyBlocks; round++) {
      const shift = round % entries.length;
      const order = [...entries.slice(shift), ...entries.slice(0, shift)];
      const p50s = new Map<string, number>();
      for (const [name, conn] of order) {
        const latencies = await block(conn, plan.blockCalls);
        all.get(name)!.push(...latencies);
        const p50 = quantile(latencies.sort((a, b) => a - b), 0.5);
        p50s.set(name, p50);
        figure.record('seq-block-p50', name, p50);
      }
      for (const [name, p50] of p50s) if (name !== bare.name) figure.record('seq-pair-ratio', name, p50 / p50s.get(bare.name)!);
    }
    for (const [name, latencies] of all) {
      latencies.sort((a, b) => a - b);
      figure.record('seq-p50', name, quantile(latencies, 0.5));
      figure.record('seq-p99', name, quantile(latencies, 0.99));
    }
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}

/** `count` calls one after another; each one's latency in µs. */
export async function block(conn: Conn, count: number): Promise<number[]> {
  const latencies = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    const t = now();
    await conn.call('echo', ARGS);
    latencies[i] = since(t) * 1000;
  }
  return latencies;
}
