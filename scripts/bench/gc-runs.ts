// Figure 1's loop (every client connected, a full GC before each run of 0.3 s, 64 in
// flight) with each run's garbage collection counted: a dev tool, not part of
// `npm run bench`. It shows how much of a run the scavenges take in the bench's heap: a
// client whose scavenges keep much of what it allocated (the SDKs' Maps of pending requests
// after a full GC, bench/PROFILE.md, fifth round) spends 40-60 ms of each run in them. Usage:
//   node --expose-gc dist-bench/scripts/bench/gc-runs.js [rounds]
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { placements } from './placement.js';
import { collect } from './procs.js';
import { pin } from './pin.js';
import { closeAll, connectAll, inFlight, inFlightFor, THROUGHPUT_IMPLS } from './throughput.js';

interface Run {
  rate: number;
  scavenges: number;
  scavengeMs: number;
}

const rounds = Number(process.argv[2] ?? 8);
const where = placements().split;
pin(where.host);
const conns = await connectAll(THROUGHPUT_IMPLS, where);
let scavenges = 0;
let scavengeMs = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MINOR) continue;
    scavenges++;
    scavengeMs += entry.duration;
  }
});
observer.observe({ entryTypes: ['gc'] });
const runs = new Map<string, Run[]>();
const turn = () => new Promise((resolve) => setImmediate(resolve));
try {
  for (const conn of conns.values()) await inFlight(conn, 4000, 64);
  const entries = [...conns];
  for (let round = 0; round < rounds; round++) {
    const shift = round % entries.length;
    for (const [name, conn] of [...entries.slice(shift), ...entries.slice(0, shift)]) {
      collect();
      await turn(); // the observer hears of the forced collection before the count starts
      scavenges = scavengeMs = 0;
      const { calls, seconds } = await inFlightFor(conn, 0.3, 64);
      await turn();
      runs.set(name, [...(runs.get(name) ?? []), { rate: calls / seconds, scavenges, scavengeMs }]);
    }
  }
} finally {
  observer.disconnect();
  await closeAll(conns);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (const [name, list] of runs) {
  const rate = median(list.map((r) => r.rate));
  process.stdout.write(
    `${name.padEnd(10)} ${Math.round(rate).toString().padStart(7)} calls/s; a run of 0.3 s: ${median(list.map((r) => r.scavenges))} scavenges, ${median(list.map((r) => r.scavengeMs)).toFixed(1)} ms of them\n`,
  );
}
