import { type Conn, firstText, impls } from './clients.js';
import type { Plan } from './plan.js';
import { alternate, Figure, type Metric } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, quantile, since } from './stats.js';

const ARGS = { text: 'hello' };

/** Figures 1–3: warm calls one at a time, 64 in flight, and a 5 MB result, over one connection per client. */
export async function warmFigures(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const server = fixtureServer('bench-echo-server.mjs');
  const conns = new Map<string, Conn>();
  try {
    for (const impl of impls) conns.set(impl.name, await impl.connect(server));
    for (const conn of conns.values()) await sequential(conn, Math.max(200, plan.sequentialCalls / 4)); // JIT warm-up

    const seq = new Figure(1)
      .define('seq-p50', 'warm sequential call: p50 latency', 'µs', 'lower')
      .define('seq-p99', 'warm sequential call: p99 latency', 'µs', 'lower')
      .define('seq-rate', 'warm sequential calls', 'calls/s', 'higher');
    log(`figure 1: ${plan.sequentialCalls} sequential calls per run`);
    await alternate(
      plan.warmRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const { latencies, seconds } = await sequential(conn, plan.sequentialCalls);
          seq.record('seq-p50', name, quantile(latencies, 0.5) * 1000);
          seq.record('seq-p99', name, quantile(latencies, 0.99) * 1000);
          seq.record('seq-rate', name, plan.sequentialCalls / seconds);
        },
      })),
      log,
    );

    const flight = new Figure(2).define('inflight-rate', `warm calls, ${plan.inflight} in flight`, 'calls/s', 'higher');
    log(`figure 2: ${plan.inflightCalls} calls per run, ${plan.inflight} in flight`);
    for (const conn of conns.values()) await inFlight(conn, Math.min(2000, plan.inflightCalls), plan.inflight);
    await alternate(
      plan.warmRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const seconds = await inFlight(conn, plan.inflightCalls, plan.inflight);
          flight.record('inflight-rate', name, plan.inflightCalls / seconds);
        },
      })),
      log,
    );

    const big = new Figure(3).define('big', `a ${mib(plan.bigBytes)} tool result: round trip`, 'ms', 'lower');
    log(`figure 3: ${plan.bigTrips} round trips of ${mib(plan.bigBytes)} per run`);
    for (const [name, conn] of conns) {
      const text = firstText(await conn.call('big', { bytes: plan.bigBytes }));
      if (text.length !== plan.bigBytes) throw new Error(`${name}: the big result has ${text.length} characters, not ${plan.bigBytes}`);
    }
    await alternate(
      plan.warmRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const trips: number[] = [];
          for (let i = 0; i < plan.bigTrips; i++) {
            const start = now();
            await conn.call('big', { bytes: plan.bigBytes });
            trips.push(since(start));
          }
          big.record('big', name, quantile(trips.sort((a, b) => a - b), 0.5));
        },
      })),
      log,
    );
    return [...seq.list(), ...flight.list(), ...big.list()];
  } finally {
    await Promise.all([...conns.values()].map((conn) => conn.close()));
  }
}

/** `count` calls one after another; the latencies (ms, ascending) and the total time (s). */
async function sequential(conn: Conn, count: number): Promise<{ latencies: number[]; seconds: number }> {
  const latencies = new Array<number>(count);
  const start = now();
  for (let i = 0; i < count; i++) {
    const t = now();
    await conn.call('echo', ARGS);
    latencies[i] = since(t);
  }
  const seconds = since(start) / 1000;
  return { latencies: latencies.sort((a, b) => a - b), seconds };
}

/** `count` calls with `width` in flight at all times (each finished call starts the next); seconds taken. */
async function inFlight(conn: Conn, count: number, width: number): Promise<number> {
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

const mib = (bytes: number): string => `${+(bytes / 1024 / 1024).toFixed(2)} MiB`;
