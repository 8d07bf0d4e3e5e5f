import { serverProcesses } from './leftover-processes.mjs';

/** Fails the run when a test left a server process behind (after killing it). */
export default async function globalTeardown() {
  const since = Number(process.env.LAZY_MCP_RUN_SINCE ?? 0);
  const ours = () => serverProcesses(process.pid, since);
  // A process being killed right now may take a moment to be reaped.
  const deadline = Date.now() + 3000;
  let left = ours();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = ours();
  }
  if (left.length === 0) return;
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  throw new Error(`tests left ${left.length} server process(es) behind:\n${left.map((p) => `  ${p.pid} ${p.cmd}`).join('\n')}`);
}
