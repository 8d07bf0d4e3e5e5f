// Two builds of lazy-mcp side by side in one process: a dev tool for before/after
// comparisons of a change, not part of `npm run bench`. Each build is loaded as its own
// module graph, so both are fully themselves; their clients alternate run by run on
// children of the same server, placed as the bench places them. Usage:
//   git worktree add /tmp/base <rev> && (cd /tmp/base && npx tsc -p tsconfig.bench.json)
//   node dist-bench/scripts/bench/ab.js /tmp/base/dist-bench [--seq] [runs] [calls] [client ...]
// With --seq, calls go one at a time and host and children share CPU 0, as figure 2 runs them.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Conn, Impl } from './clients.js';
import * as here from './clients.js';
import { placements } from './placement.js';
import { pin, placed } from './pin.js';
import { fixtureServer } from './setup.js';
import { inFlight } from './throughput.js';

const argv = process.argv.slice(2);
const seq = argv.includes('--seq');
const [baseDir, runsText = '7', callsText = '20000', ...names] = argv.filter((a) => a !== '--seq');
if (!baseDir) throw new Error('usage: ab.js <other dist-bench> [runs] [calls] [client ...]');
const there = (await import(pathToFileURL(resolve(baseDir, 'scripts/bench/clients.js')).href)) as typeof here;
const pick = (build: typeof here, name: string): Impl => {
  const impl = ({ bare: build.bare, McpClient: build.client, manager: build.manager, session: build.session } as Record<string, Impl>)[name];
  if (!impl) throw new Error(`unknown client ${name}; one of bare, McpClient, manager, session`);
  return impl;
};
const where = seq ? placements().shared : placements().split;
pin(where.host);
const server = fixtureServer('bench-echo-server.mjs');
const conns: [string, Conn][] = [];
for (const name of names.length > 0 ? names : ['manager']) {
  conns.push([`${name} (base)`, await placed(where.children, () => pick(there, name).connect(server), where.host)]);
  conns.push([`${name} (this)`, await placed(where.children, () => pick(here, name).connect(server), where.host)]);
}
const calls = Number(callsText);
const cpu: Record<string, number[]> = {};
const rate: Record<string, number[]> = {};
try {
  for (const [, conn] of conns) await inFlight(conn, 4000, 64);
  for (let run = 0; run < Number(runsText); run++) {
    for (let k = 0; k < conns.length; k++) {
      const [name, conn] = conns[(k + run) % conns.length]!;
      const before = process.cpuUsage();
      const started = performance.now();
      if (seq) for (let i = 0; i < calls; i++) await conn.call('echo', { text: 'hello' });
      const seconds = seq ? (performance.now() - started) / 1000 : await inFlight(conn, calls, 64);
      const used = process.cpuUsage(before);
      (cpu[name] ??= []).push((used.user + used.system) / calls);
      (rate[name] ??= []).push(calls / seconds);
    }
  }
} finally {
  await Promise.all(conns.map(([, conn]) => conn.close()));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [name] of conns) {
  const r = median(rate[name]!);
  process.stdout.write(`${name.padEnd(20)} host CPU ${median(cpu[name]!).toFixed(2)} µs/call, ${Math.round(r)} calls/s${seq ? ` (${(1e6 / r).toFixed(1)} µs a call)` : ''}\n`);
}
