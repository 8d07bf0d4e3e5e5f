// Where the 2026 era's cost lies: host and server CPU time per call in each era against
// the same SDK v2 server (`--dual`, one child per era), interleaved run by run. A dev tool,
// not part of `npm run bench` (figure 8 gives the calls/s). Host on CPU 0, the children on
// the last CPU, as the bench places them. Usage:
//   node dist-bench/scripts/bench/era-split.js [runs] [calls]
import { McpClient } from '../../src/index.js';
import type { ProtocolEra } from '../../src/protocol/types.js';
import { placements } from './placement.js';
import { pin, placed } from './pin.js';
import { cpuMs } from './procs.js';
import { packageFixtureServer } from './setup.js';
import { inFlight } from './throughput.js';

const [runsText = '5', callsText = '10000'] = process.argv.slice(2);
const calls = Number(callsText);
const where = placements().split;
pin(where.host);
const server = packageFixtureServer('sdk2-modern-server.mjs', '--dual');
const config = { command: server.command, args: server.args, env: server.env };
const eras: ProtocolEra[] = ['2026', 'legacy'];
const clients = new Map<ProtocolEra, McpClient>();
const figures: Record<string, { host: number[]; server: number[]; rate: number[] }> = {};
try {
  for (const era of eras) {
    const c = await placed(where.children, () => McpClient.connect(config, { name: era, ...(era === '2026' ? { era } : {}) }), where.host);
    if (c.era !== era) throw new Error(`negotiated the ${c.era} era, not ${era}`);
    clients.set(era, c);
  }
  const conn = (c: McpClient) => ({ pid: c.pid, call: (tool: string, args: Record<string, unknown>) => c.callTool(tool, args), close: () => c.close() });
  for (const c of clients.values()) await inFlight(conn(c), 2000, 64);
  for (let run = 0; run < Number(runsText); run++) {
    for (let k = 0; k < eras.length; k++) {
      const era = eras[(k + run) % eras.length]!;
      const c = clients.get(era)!;
      const host = process.cpuUsage();
      const child = cpuMs(c.pid);
      const seconds = await inFlight(conn(c), calls, 64);
      const used = process.cpuUsage(host);
      const figure = (figures[era] ??= { host: [], server: [], rate: [] });
      figure.host.push((used.user + used.system) / calls);
      figure.server.push(((cpuMs(c.pid) - child) * 1000) / calls);
      figure.rate.push(calls / seconds);
    }
  }
} finally {
  await Promise.all([...clients.values()].map((c) => c.close()));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (const era of eras) {
  const f = figures[era]!;
  console.log(`${era.padEnd(7)} ${median(f.rate).toFixed(0).padStart(6)} calls/s; CPU per call: host ${median(f.host).toFixed(1)} µs, server ${median(f.server).toFixed(0)} µs`);
}
