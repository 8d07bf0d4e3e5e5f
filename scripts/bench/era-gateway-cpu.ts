// The 2026 era's client cost against a fast server (issue 34 item 4): host CPU time per
// call of McpClient in each era against its own `lazy-mcp serve --no-shared` (stdio)
// fronting the echo server, interleaved run by run, 64 in flight. A dev tool for
// before/after comparisons, not part of `npm run bench` (figure 13 is). Host on CPU 0,
// the gateways on the last CPU, as the bench places them.
//
// A third client is the control: the legacy era carrying the 2026 envelope in each call's
// `_meta` (so the gateway answers in the 2026 shape too), the bytes of a 2026 call both
// ways through the legacy era's code. 2026 ÷ it is what the 2026 era's own client code
// costs; it ÷ legacy is what the bytes the 2026 revision puts on the wire cost. Usage:
//   node dist-bench/scripts/bench/era-gateway-cpu.js [runs] [calls]
import type { Conn } from './clients.js';
import { eraConn, sameBytesConn, serveStdio, workDir, writeConfig } from './gateway-procs.js';
import { placements } from './placement.js';
import { pin, placed } from './pin.js';
import { cpuMs } from './procs.js';
import { fixtureServer } from './setup.js';
import { inFlight } from './throughput.js';

const [runsText = '9', callsText = '10000'] = process.argv.slice(2);
const calls = Number(callsText);
const where = placements().split;
pin(where.host);
const config = writeConfig(workDir('era-gateway-cpu'), 'one.json', { echo: fixtureServer('bench-echo-server.mjs') });
const eras = ['2026', 'legacy', 'legacy+2026 bytes'] as const;
const conns = new Map<string, Conn>();
const figures: Record<string, { host: number[]; server: number[]; rate: number[] }> = {};

try {
  for (const era of ['2026', 'legacy'] as const) conns.set(era, await placed(where.children, () => eraConn(() => serveStdio(config, era), era, era, (t) => `mcp__echo__${t}`), where.host));
  conns.set('legacy+2026 bytes', await placed(where.children, () => sameBytesConn(() => serveStdio(config, 'legacy'), (t) => `mcp__echo__${t}`), where.host));
  for (const conn of conns.values()) await inFlight(conn, 4000, 64);
  for (let run = 0; run < Number(runsText); run++) {
    for (let k = 0; k < eras.length; k++) {
      const era = eras[(k + run) % eras.length]!;
      const conn = conns.get(era)!;
      const host = process.cpuUsage();
      const child = cpuMs(conn.pid);
      const seconds = await inFlight(conn, calls, 64);
      const used = process.cpuUsage(host);
      const figure = (figures[era] ??= { host: [], server: [], rate: [] });
      figure.host.push((used.user + used.system) / calls);
      figure.server.push(((cpuMs(conn.pid) - child) * 1000) / calls);
      figure.rate.push(calls / seconds);
    }
  }
} finally {
  await Promise.all([...conns.values()].map((c) => c.close()));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (const era of eras) {
  const f = figures[era]!;
  console.log(`${era.padEnd(17)} ${median(f.rate).toFixed(0).padStart(6)} calls/s; CPU per call: host ${median(f.host).toFixed(1)} µs (${f.host.map((v) => v.toFixed(0)).join(' ')}), gateway ${median(f.server).toFixed(0)} µs`);
}
const h = (era: string) => median(figures[era]!.host);
console.log(`host CPU per call, 2026 ÷ legacy: ${(h('2026') / h('legacy')).toFixed(3)}×`);
console.log(`  of which the 2026 era's client code (2026 ÷ legacy carrying the same bytes): ${(h('2026') / h('legacy+2026 bytes')).toFixed(3)}×`);
console.log(`  and the bytes on the wire (legacy carrying the 2026 bytes ÷ legacy): ${(h('legacy+2026 bytes') / h('legacy')).toFixed(3)}×`);
