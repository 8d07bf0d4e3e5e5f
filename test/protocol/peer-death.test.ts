import { McpClient } from '../../src/protocol/client.js';
import { fixture, isAlive, waitFor } from '../support/fixtures.js';

describe('when the server dies', () => {
  it('rejects every pending call at once with peer-exited and the stderr tail', async () => {
    const client = await McpClient.connect(fixture('echo-server.mjs'), { name: 'fragile' });
    const closed = new Promise((resolve) => client.once('close', resolve));
    const pending = [client.callTool('slow', { ms: 10_000 }), client.callTool('slow', { ms: 10_000 })];
    const crash = client.callTool('crash');
    const errors = await Promise.all([...pending, crash].map((p) => p.catch((e) => e)));
    for (const error of errors) {
      expect(error.code).toBe('peer-exited');
      expect(error.exitCode).toBe(3);
      expect(error.stderrTail).toEqual(['about to crash']);
      expect(error.message).toContain('server "fragile"');
      expect(error.message).toContain('exited with code 3');
    }
    expect((await closed as { code: string }).code).toBe('peer-exited');
    const later = await client.callTool('echo', { text: 'x' }).catch((e) => e);
    expect(later.code).toBe('peer-exited');
    await client.close();
    expect(await waitFor(() => !isAlive(client.pid), 2000)).toBe(true);
  });

  it('reports a kill by signal', async () => {
    const client = await McpClient.connect(fixture('echo-server.mjs'), { name: 'victim' });
    const call = client.callTool('slow', { ms: 10_000 });
    process.kill(client.pid, 'SIGKILL');
    const error = await call.catch((e) => e);
    expect(error.code).toBe('peer-exited');
    expect(error.signal).toBe('SIGKILL');
    expect(error.message).toContain('was killed by SIGKILL');
    await client.close();
  });

  it('closing rejects pending calls with closed', async () => {
    const client = await McpClient.connect(fixture('echo-server.mjs'), { name: 'echo' });
    const call = client.callTool('slow', { ms: 10_000 }).catch((e) => e);
    await client.close();
    const error = await call;
    expect(error.code).toBe('closed');
    expect(error.phase).toBe('tools/call');
  });
});
