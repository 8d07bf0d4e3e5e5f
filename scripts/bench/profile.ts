// A profiling driver, not part of `npm run bench`: one client (`manager`, `session`,
// `McpClient` or `bare`) making calls with 64 in flight (or one at a time with `--seq`),
// to run under `node --cpu-prof`. Usage:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof dist-bench/scripts/bench/profile.js session 200000
import { bare, client, type Impl, manager, session } from './clients.js';
import { placements } from './placement.js';
import { pin, placed } from './pin.js';
import { fixtureServer } from './setup.js';
import { now, since } from './stats.js';
import { inFlight } from './throughput.js';

const impls: Record<string, Impl> = { manager, session, McpClient: client, bare };
const [name = 'session', countText = '100000', mode = ''] = process.argv.slice(2);
const impl = impls[name];
if (!impl) throw new Error(`unknown client ${name}; one of ${Object.keys(impls).join(', ')}`);
const count = Number(countText);
// Placed as the bench places them: with 64 in flight the host on CPU 0 and the child on the
// last CPU, so the host's write syscalls do not include the child's run; one at a time, both
// on CPU 0 (a wake-up across vCPUs costs ~100 µs here).
const where = mode === '--seq' ? placements().shared : placements().split;
pin(where.host);
const conn = await placed(where.children, () => impl.connect(fixtureServer('bench-echo-server.mjs')), where.host);
try {
  const start = now();
  if (mode === '--seq') for (let i = 0; i < count; i++) await conn.call('echo', { text: 'hello' });
  else await inFlight(conn, count, 64);
  const ms = since(start);
  process.stderr.write(`${name}: ${count} calls in ${ms.toFixed(0)} ms = ${Math.round(count / (ms / 1000))} calls/s${mode ? ' (sequential)' : ''}\n`);
} finally {
  await conn.close();
}
