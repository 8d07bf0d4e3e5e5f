import { bare, client, type Conn, firstText, type Impl, manager, sdk1, sdk2, session } from './clients.js';
import { placed } from './pin.js';
import type { Plan } from './plan.js';
import type { Placement } from './placement.js';
import { alternate, Figure, type Metric } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, quantile, since } from './stats.js';

const ARGS = { text: 'hello' };

/** Clients of figure 1, each on its own child of the same echo server. */
export const THROUGHPUT_IMPLS: readonly Impl[] = [bare, client, manager, session, sdk1, sdk2];
/** Clients of figure 3 (the SDKs copy a 5 MiB result several times; they are in figure 1). */
export const BIG_IMPLS: readonly Impl[] = [bare, client, manager, session];

/** Opens one connection per client with the children on `where.children`, the host back on `where.host`. */
export async function connectAll(impls: readonly Impl[], where: Placement): Promise<Map<string, Conn>> {
  const server = fixtureServer('bench-echo-server.mjs');
  const conns = new Map<string, Conn>();
  try {
    for (const impl of impls) conns.set(impl.name, await placed(where.children, () => impl.connect(server), where.host));
  } catch (error) {
    await closeAll(conns);
    throw error;
  }
  return conns;
}

export async function closeAll(conns: Map<string, Conn>): Promise<void> {
  await Promise.all([...conns.values()].map((conn) => conn.close()));
}

/** Figure 1: calls/s with `inflight` calls in flight at all times, every client side by side. */
export async function throughputFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const conns = await connectAll(THROUGHPUT_IMPLS, where);
  try {
    const figure = new Figure(1).define('inflight', `echo calls, ${plan.inflight} in flight`, 'calls/s', 'higher');
    log(`figure 1: ${plan.inflightSeconds} s of calls per run, ${plan.inflight} in flight, ${conns.size} clients × ${plan.rounds} runs`);
    await inFlightRuns(figure, 'inflight', conns, plan, log);
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}

/**
 * `conns` side by side: a JIT warm-up of `warmUp` calls, then `plan.rounds` alternating runs
 * at `plan.inflight` in flight, each recorded under `id` in calls/s; with `cpu`, the host's
 * CPU time per call too, under `${id}-cpu`.
 */
export async function inFlightRuns(figure: Figure, id: string, conns: Map<string, Conn>, plan: Plan, log?: (text: string) => void, { warmUp = 4000, cpu = false } = {}): Promise<void> {
  for (const conn of conns.values()) await inFlight(conn, Math.min(warmUp, plan.inflightCalls), plan.inflight);
  await alternate(
    plan.rounds,
    [...conns].map(([name, conn]) => ({
      name,
      run: async () => {
        const { rate, cpuPerCall } = await inFlightCpu(conn, plan.inflightSeconds, plan.inflight);
        figure.record(id, name, rate);
        // The host's CPU time per call tells the client's share of a run from the server's.
        if (cpu) figure.record(`${id}-cpu`, name, cpuPerCall);
      },
    })),
    log,
  );
}

/** Figure 3: round trip of a tool result of `bigBytes` bytes. */
export async function bigFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const conns = await connectAll(BIG_IMPLS, where);
  try {
    const figure = new Figure(3).define('big', `a ${mib(plan.bigBytes)} tool result: round trip`, 'ms', 'lower');
    for (const [name, conn] of conns) {
      const text = firstText(await conn.call('big', { bytes: plan.bigBytes }));
      if (text.length !== plan.bigBytes) throw new Error(`${name}: the big result has ${text.length} characters, not ${plan.bigBytes}`);
    }
    log(`figure 3: ${plan.bigTrips} round trips of ${mib(plan.bigBytes)} per run`);
    await alternate(
      plan.bigRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const trips: number[] = [];
          for (let i = 0; i < plan.bigTrips; i++) {
            const start = now();
            await conn.call('big', { bytes: plan.bigBytes });
            trips.push(since(start));
          }
          figure.record('big', name, quantile(trips.sort((a, b) => a - b), 0.5));
        },
      })),
      log,
    );
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}

/** `count` calls with `width` in flight at all times (each finished call starts the next); seconds taken. */
export async function inFlight(conn: Conn, count: number, width: number): Promise<number> {
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      await conn.call('echo', ARGS);
    }
  };
  const start = now();
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return since(start) / 1000;
}

/**
 * Calls with `width` in flight at all times for about `seconds` (no new call starts
 * after that; the last ones are waited for): how many, and the seconds taken. A run of
 * fixed length keeps the bench's time bounded when the machine is loaded.
 */
export async function inFlightFor(conn: Conn, seconds: number, width: number): Promise<{ calls: number; seconds: number }> {
  let calls = 0;
  const start = now();
  const end = start + BigInt(Math.round(seconds * 1e9));
  const worker = async () => {
    while (process.hrtime.bigint() < end) {
      await conn.call('echo', ARGS);
      calls++;
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return { calls, seconds: since(start) / 1000 };
}

/** {@link inFlightFor} with the host's CPU time it took: calls/s, and µs of host CPU a call (the client's share of a run). */
export async function inFlightCpu(conn: Conn, seconds: number, width: number): Promise<{ calls: number; rate: number; cpuPerCall: number }> {
  const cpu = process.cpuUsage();
  const run = await inFlightFor(conn, seconds, width);
  const used = process.cpuUsage(cpu);
  return { calls: run.calls, rate: run.calls / run.seconds, cpuPerCall: (used.user + used.system) / Math.max(1, run.calls) };
}

export const mib = (bytes: number): string => `${+(bytes / 1024 / 1024).toFixed(2)} MiB`;
