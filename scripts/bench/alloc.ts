// Bytes a call allocates on the host, by the function that allocates them: a dev tool, not
// part of `npm run bench`. In a large heap (the bench's, a real host's) every scavenge keeps
// part of what was allocated since the last one, so calls/s follow bytes allocated per call.
// Usage (V8's sampling heap profiler, every 256 bytes, collected objects included; add
// --no-turbo-inlining to see inlined functions on their own):
//   node dist-bench/scripts/bench/alloc.js <manager|session|McpClient|bare> [calls] [--seq]
import { Session } from 'node:inspector/promises';
import { bare, client, type Impl, manager, session } from './clients.js';
import { fixtureServer } from './setup.js';
import { inFlight } from './throughput.js';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

const impls: Record<string, Impl> = { manager, session, McpClient: client, bare };
const argv = process.argv.slice(2);
const width = argv.includes('--seq') ? 1 : 64;
const [name = 'manager', countText = '100000'] = argv.filter((a) => a !== '--seq');
const impl = impls[name];
if (!impl) throw new Error(`unknown client ${name}; one of ${Object.keys(impls).join(', ')}`);
const count = Number(countText);
const conn = await impl.connect(fixtureServer('bench-echo-server.mjs'));
const inspector = new Session();
inspector.connect();
try {
  await inFlight(conn, 5000, width); // JIT warm-up
  await inspector.post('HeapProfiler.enable');
  await inspector.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await inFlight(conn, count, width);
  const { profile } = (await inspector.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SamplingNode } };
  const bytes = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    bytes.set(where, (bytes.get(where) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  process.stdout.write(`${name}: ~${Math.round(total / count)} bytes allocated a call (${width} in flight)\n`);
  for (const [where, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    process.stdout.write(`${String(Math.round(size / count)).padStart(6)}  ${where}\n`);
  }
} finally {
  inspector.disconnect();
  await conn.close();
}
