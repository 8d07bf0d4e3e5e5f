// What the manager and a session add to a call on the host, apart from the wire: the time
// from `callTool` to McpClient.callTool and from its answer back to the caller,
// sequential calls, averaged. Not part of `npm run bench`. Run:
//   npx tsc -p tsconfig.bench.json && node dist-bench/scripts/bench/overhead.js [calls]
import { McpClient, McpServerManager } from '../../src/index.js';
import { poolConfig } from './clients.js';
import { fixtureServer } from './setup.js';

const count = Number(process.argv[2] ?? 20_000);
const server = fixtureServer('bench-echo-server.mjs');
const manager = McpServerManager.fromConfig(poolConfig(1, () => server, 'echo'));
await manager.callTool('mcp__echo0__echo', { text: 'start' });
const original = McpClient.prototype.callTool;
let entered = 0n;
let answered = 0n;
McpClient.prototype.callTool = function (this: McpClient, ...args: Parameters<McpClient['callTool']>) {
  entered = process.hrtime.bigint();
  return original.apply(this, args).then((result) => {
    answered = process.hrtime.bigint();
    return result;
  });
};
const session = manager.session();
try {
  for (const [name, call] of [
    ['manager', () => manager.callTool('mcp__echo0__echo', { text: 'hello' })],
    ['session', () => session.callTool('mcp__echo0__echo', { text: 'hello' })],
  ] as const) {
    for (let i = 0; i < 2000; i++) await call(); // JIT warm-up
    let before = 0n;
    let after = 0n;
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint();
      await call();
      const end = process.hrtime.bigint();
      before += entered - start;
      after += end - answered;
    }
    const us = (ns: bigint) => (Number(ns) / count / 1000).toFixed(2);
    process.stdout.write(`${name}: ${us(before)} µs before McpClient.callTool, ${us(after)} µs after its answer, ${us(before + after)} µs a call\n`);
  }
} finally {
  McpClient.prototype.callTool = original;
  await manager.shutdown();
}
