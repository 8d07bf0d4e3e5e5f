import { McpClient } from '../../src/protocol/client.js';
import { McpError } from '../../src/errors.js';
import { connect } from '../support/clients.js';
import { fixture, isAlive, waitFor } from '../support/fixtures.js';


describe('initialize handshake', () => {
  it('offers the latest revision and keeps what the server said about itself', async () => {
    const client = await connect(fixture('echo-server.mjs'), { name: 'echo' });
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(client.serverInfo).toEqual({ name: 'echo-server', version: '1.0.0' });
    expect(client.instructions).toBe('Echoes things back.');
    expect(client.capabilities.tools).toEqual({ listChanged: true });
  });

  it.each(['2025-06-18', '2025-03-26', '2024-11-05'])('accepts a server that answers %s', async (version) => {
    const client = await connect(fixture('wrong-version.mjs', version), { name: 'old' });
    expect(client.protocolVersion).toBe(version);
    await expect(client.ping()).resolves.toBeUndefined();
  });

  it('refuses a version it does not speak, naming both, and stops the server', async () => {
    const error = await McpClient.connect(fixture('wrong-version.mjs', '1999-01-01'), { name: 'ancient' }).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe('protocol-error');
    expect(error.phase).toBe('initialize');
    expect(error.message).toContain('server "ancient"');
    expect(error.message).toContain('"1999-01-01"');
    expect(error.message).toContain('2025-11-25');
  });

  it('kills a server that never answers initialize and reports the timeout with its stderr', async () => {
    const started = Date.now();
    const error = await McpClient.connect(fixture('never-initializes.mjs'), { name: 'mute', timeout: 1500, shutdownGraceMs: 200 }).catch((e) => e);
    expect(error.code).toBe('timeout');
    expect(error.phase).toBe('initialize');
    expect(error.message).toMatch(/server "mute": initialize timed out after 1500 ms/);
    expect(error.message).toContain('never-initializes: up, not answering');
    expect(error.stderrTail).toContain('never-initializes: up, not answering');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a server that exits at once with its exit code and stderr', async () => {
    const error = await McpClient.connect(fixture('exits-at-once.mjs'), { name: 'db' }).catch((e) => e);
    expect(error.code).toBe('peer-exited');
    expect(error.phase).toBe('initialize');
    expect(error.exitCode).toBe(1);
    expect(error.stderrTail).toEqual(['fatal: DATABASE_URL is not set']);
    expect(error.message).toContain('server "db"');
    expect(error.message).toContain('DATABASE_URL is not set');
  });

  it('reports a command that does not exist as spawn-failed', async () => {
    const error = await McpClient.connect({ command: 'lazy-mcp-no-such-command' }, { name: 'ghost' }).catch((e) => e);
    expect(error.code).toBe('spawn-failed');
    expect(error.message).toContain('server "ghost"');
  });

  it('declares the roots capability only when roots are given, and answers roots/list', async () => {
    const roots = [{ uri: 'file:///tmp/project', name: 'project' }];
    const withRoots = await connect(fixture('echo-server.mjs'), { roots });
    const answer = await withRoots.callTool('ask_client', { method: 'roots/list' });
    expect(JSON.parse((answer.content[0] as { text: string }).text).result).toEqual({ roots });

    const without = await connect(fixture('echo-server.mjs'));
    const refused = await without.callTool('ask_client', { method: 'roots/list' });
    expect(JSON.parse((refused.content[0] as { text: string }).text).error.code).toBe(-32601);
  });

  it('close() is idempotent, rejects later calls with closed, and the process is gone', async () => {
    const client = await connect(fixture('echo-server.mjs'), { name: 'echo' });
    const pid = client.pid;
    await Promise.all([client.close(), client.close()]);
    await client.close();
    expect(isAlive(pid)).toBe(false);
    const error = await client.callTool('echo', { text: 'x' }).catch((e) => e);
    expect(error.code).toBe('closed');
    expect(error.message).toContain('server "echo"');
    expect(await waitFor(() => !isAlive(pid), 1000)).toBe(true);
  });
});
