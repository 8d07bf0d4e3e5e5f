import { RequestEngine } from '../../src/protocol/engine/engine.js';
import { StdioChannel } from '../../src/transport/stdio/stdio-channel.js';
import { fixture } from '../support/fixtures.js';

/** Polls `check` until it holds, for at most `ms`. */
async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a stdio channel abandoning requests', () => {
  it('never writes a timed-out request still queued, and cancels one the server already has', async () => {
    const channel = await StdioChannel.open(fixture('stops-reading.mjs'), { name: 'slow' });
    const lines: string[] = [];
    channel.onStderr((line) => lines.push(line));
    const engine = new RequestEngine(channel, { name: 'slow', timeout: 400 });
    try {
      await until(() => lines.includes('ready'), 10_000);
      // 60 × 8 KiB: more than a pipe holds, so most frames wait in the host's queue.
      const pad = 'x'.repeat(8 * 1024);
      const calls = Array.from({ length: 60 }, () => engine.request({ method: 'tools/call', params: { pad }, phase: 'tools/call' }).catch((e: unknown) => e));
      const outcomes = await Promise.all(calls);
      expect(outcomes.every((e) => (e as { code?: string }).code === 'timeout')).toBe(true);
      process.kill(channel.info.pid!, 'SIGUSR2');
      // A request sent after them all marks the end of what the server gets.
      let lastId: unknown;
      void engine.request({ method: 'ping', params: {}, phase: 'ping', onId: (id: unknown) => (lastId = id) }, { timeout: 60_000 }).catch(() => undefined);
      await until(() => lastId !== undefined && lines.includes(`got ${String(lastId)}`), 10_000);
      const received = lines.filter((l) => /^got \d+$/.test(l) && l !== `got ${String(lastId)}`).length;
      const cancelled = lines.filter((l) => l === 'got notifications/cancelled').length;
      // The pipe held a few; the rest were dropped unwritten, and each written one was cancelled.
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(60);
      expect(cancelled).toBe(received);
    } finally {
      await engine.close(500);
    }
  });
});
