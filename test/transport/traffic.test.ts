import { ServerProcess } from '../../src/transport/stdio/server-process.js';
import { nodeSpec, waitUntil } from './process-probes.js';

describe('ServerProcess traffic', () => {
  it('counts the bytes written to stdin and read from stdout, live', async () => {
    const server = await ServerProcess.spawn(nodeSpec('echo-lines.mjs'));
    try {
      expect(server.traffic).toMatchObject({ bytesIn: 0, bytesOut: 0 });
      const counters = server.traffic;
      let echoed = '';
      server.stdout.setEncoding('utf8').on('data', (chunk: string) => (echoed += chunk));
      const line = `${'é'.repeat(10)}\n`; // 21 bytes, 11 characters
      server.stdin.write(line);
      server.stdin.write(line);
      await waitUntil(() => echoed.length === 2 * line.length, 5000, 'the echo');
      // The same object, read again: its figures follow the pipes.
      await waitUntil(() => counters.bytesIn === 42, 5000, 'the count of bytes read');
      expect(counters.bytesOut).toBe(42);
    } finally {
      await server.close(200);
    }
    expect(server.traffic.bytesOut).toBe(42);
  });
});
