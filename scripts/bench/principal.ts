import { principal, session } from './clients.js';
import { block } from './latency.js';
import { pin } from './pin.js';
import type { Placements } from './placement.js';
import type { Plan } from './plan.js';
import { alternate, Figure, type Metric } from './runs.js';
import { quantile } from './stats.js';
import { closeAll, connectAll, inFlightRuns } from './throughput.js';

/** The two sides of figure 15, as they appear in the results. */
export const PRINCIPAL = principal.name;
export const PLAIN = session.name;

/**
 * Figure 12, issue 31's bench row: what a principal's session costs against a plain one.
 * `manager.session({ principal })` calling a server run per principal (`"perPrincipal":
 * true`, its instance started for that principal) beside `manager.session()` calling the
 * same echo server shared, each on a manager and a child of its own. Sequential calls in
 * alternating blocks (host and children on one CPU, as figure 2), then calls/s with 64 in
 * flight in alternating runs (the children on the other CPU, as figure 1).
 */
export async function principalFigure(plan: Plan, where: Placements, log: (text: string) => void): Promise<Metric[]> {
  const figure = new Figure(15)
    .define('principal-p50', 'principal\'s session vs plain session: sequential p50', 'µs', 'lower')
    .define('principal-inflight', `principal's session vs plain session: ${plan.inflight} in flight`, 'calls/s', 'higher');
  pin(where.shared.host);
  let conns = await connectAll([session, principal], where.shared);
  try {
    for (const conn of conns.values()) await block(conn, Math.max(500, plan.blockCalls)); // JIT warm-up
    log(`figure 15: ${plan.latencyBlocks} blocks of ${plan.blockCalls} sequential calls, then ${plan.rounds} runs of ${plan.inflightSeconds} s at ${plan.inflight} in flight; principal vs plain session`);
    const all = new Map<string, number[]>([...conns.keys()].map((name) => [name, []]));
    await alternate(
      plan.latencyBlocks,
      [...conns].map(([name, conn]) => ({ name, run: async () => void all.get(name)!.push(...(await block(conn, plan.blockCalls))) })),
    );
    for (const [name, latencies] of all) figure.record('principal-p50', name, quantile(latencies.sort((a, b) => a - b), 0.5));
  } finally {
    await closeAll(conns);
  }
  pin(where.split.host);
  conns = await connectAll([session, principal], where.split);
  try {
    await inFlightRuns(figure, 'principal-inflight', conns, plan);
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}
