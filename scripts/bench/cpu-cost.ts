// Host CPU time per call at 64 in flight, the clients interleaved run by run: a dev tool,
// not part of `npm run bench`. On a loaded machine calls/s swing with the neighbours, the
// host's own CPU time per call much less, so before/after comparisons of a change use this.
// Usage (host on CPU 0, children on the last CPU, as the bench places them):
//   node dist-bench/scripts/bench/cpu-cost.js [runs] [calls] [client ...]
import { bare, client, type Conn, type Impl, manager, sdk1, sdk2, session } from './clients.js';
import { placements } from './placement.js';
import { pin, placed } from './pin.js';
import { cpuMs } from './procs.js';
import { fixtureServer } from './setup.js';
import { inFlight } from './throughput.js';

const impls: Record<string, Impl> = { bare, McpClient: client, manager, session, 'sdk v1': sdk1, 'sdk v2': sdk2 };
const argv = process.argv.slice(2);
const seq = argv.includes('--seq');
const [runsText = '5', callsText = '20000', ...names] = argv.filter((a) => a !== '--seq');
const chosen = (names.length > 0 ? names : ['bare', 'McpClient', 'manager', 'session']).map((name) => {
  const impl = impls[name];
  if (!impl) throw new Error(`unknown client ${name}; one of ${Object.keys(impls).join(', ')}`);
  return impl;
});
const where = seq ? placements().shared : placements().split;
pin(where.host);
const server = fixtureServer('bench-echo-server.mjs');
const conns: [string, Conn][] = [];
for (const impl of chosen) conns.push([impl.name, await placed(where.children, () => impl.connect(server), where.host)]);
const cpu: Record<string, number[]> = {};
const rate: Record<string, number[]> = {};
const serverCpu: Record<string, number[]> = {};
try {
  for (const [, conn] of conns) await inFlight(conn, 4000, 64);
  for (let run = 0; run < Number(runsText); run++) {
    for (let k = 0; k < conns.length; k++) {
      const [name, conn] = conns[(k + run) % conns.length]!;
      const before = process.cpuUsage();
      const child = cpuMs(conn.pid);
      const seconds = await inFlight(conn, Number(callsText), seq ? 1 : 64);
      const used = process.cpuUsage(before);
      (cpu[name] ??= []).push((used.user + used.system) / Number(callsText));
      (rate[name] ??= []).push(Number(callsText) / seconds);
      (serverCpu[name] ??= []).push(((cpuMs(conn.pid) - child) * 1000) / Number(callsText));
    }
  }
} finally {
  await Promise.all(conns.map(([, conn]) => conn.close()));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const bareRate = rate.bare ? median(rate.bare) : undefined;
for (const [name] of conns) {
  const ratio = bareRate ? ` (${(median(rate[name]!) / bareRate).toFixed(2)}× bare)` : '';
  process.stdout.write(`${name.padEnd(10)} host CPU ${median(cpu[name]!).toFixed(2)} µs/call, server ${median(serverCpu[name]!).toFixed(2)} µs/call, ${Math.round(median(rate[name]!))} calls/s${ratio}\n`);
}
