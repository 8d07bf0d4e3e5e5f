import { type Channel, type ExitStatus, McpClient, type RequestOptions, type ServerConfig } from '../../src/index.js';
import { createMemoryChannelPair } from '../../src/transport/memory.js';
import { textOf } from '../support/fixtures.js';
import { MemoryPeer } from '../support/memory-peer.js';
import { startHandlerServer, startSseServer, startStatefulServer, type TestHttpServer } from '../transport/http/sdk-servers.js';

// McpClient.connect takes any server config (SPEC): stdio, Streamable HTTP of either era,
// and the legacy HTTP+SSE transport; McpClient.over takes a Channel a host writes itself.
const servers: TestHttpServer[] = [];
const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
async function connect(config: ServerConfig, options: Parameters<typeof McpClient.connect>[1] = {}): Promise<McpClient> {
  const client = await McpClient.connect(config, options);
  clients.push(client);
  return client;
}

describe('McpClient.connect over HTTP', () => {
  it.each([
    ['http', '2026', startHandlerServer],
    ['streamable-http', 'legacy', startStatefulServer],
  ] as const)('connects to an SDK v2 server with type %j and calls its tools (%s era)', async (type, era, start) => {
    const server = await start();
    servers.push(server);
    const client = await connect({ type, url: server.url, headers: { 'X-Team': 'blue' }, timeout: 10_000 }, { name: 'remote' });
    expect(client.era).toBe(era);
    expect(client.transport).toBe('http');
    expect((await client.listTools()).map((t) => t.name)).toEqual(['echo', 'count', 'hold']);
    const options: RequestOptions = { timeout: 5000 };
    expect(textOf(await client.callTool('echo', { text: 'over http' }, options))).toBe('over http');
    expect(server.requests.some((r) => r.headers['x-team'] === 'blue')).toBe(true);
  });

  it('connects to a legacy HTTP+SSE server with type "sse"', async () => {
    const server = await startSseServer();
    servers.push(server);
    const client = await connect({ type: 'sse', url: server.url }, { name: 'old' });
    expect(client.era).toBe('legacy');
    expect(textOf(await client.callTool('echo', { text: 'over sse' }))).toBe('over sse');
  });

  it('refuses a bad remote entry with invalid-config naming the field and the value, contacting nothing', async () => {
    await expect(McpClient.connect({ type: 'ftp' as 'http', url: 'http://127.0.0.1:1/mcp' }, { name: 'r' })).rejects.toMatchObject({
      code: 'invalid-config',
      server: 'r',
      message: 'server "r": `type` must be "stdio", "http", "streamable-http" or "sse", got "ftp" (string)',
    });
    await expect(McpClient.connect({ type: 'http', url: 'file:///etc/passwd' }, { name: 'r' })).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringContaining('`url` must be an http or https URL, got "file:///etc/passwd"'),
    });
    const secret = await McpClient.connect({ type: 'http', url: 'ftp://me:hunter2@example.invalid/' }, { name: 'r' }).catch((e: Error) => e);
    expect((secret as Error).message).not.toContain('hunter2');
    await expect(McpClient.connect({ type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { n: 1 as unknown as string } }, { name: 'r' })).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringContaining('`headers` must be'),
    });
  });

  it('says connect-failed when nothing listens there', async () => {
    const server = await startHandlerServer();
    const { url } = server;
    await server.close();
    await expect(McpClient.connect({ type: 'http', url }, { name: 'gone', timeout: 5000 })).rejects.toMatchObject({ code: 'connect-failed', server: 'gone' });
  });
});

describe('McpClient.over a channel the host writes', () => {
  it('takes any Channel, typed from the package\'s exports', async () => {
    const [near, far] = createMemoryChannelPair();
    const sent: string[] = [];
    // A host's own channel: here one that records what goes out, over another.
    class Recording implements Channel {
      constructor(private readonly inner: Channel) {}
      send: Channel['send'] = (message, context) => {
        sent.push('method' in message ? message.method : 'answer');
        return this.inner.send(message, context);
      };
      onMessage: Channel['onMessage'] = (listener) => this.inner.onMessage(listener);
      onNoise: Channel['onNoise'] = (listener) => this.inner.onNoise(listener);
      onClose: Channel['onClose'] = (listener) => this.inner.onClose(listener);
      post: Channel['post'] = (message, failed, context) => {
        this.send(message, context).catch((error: unknown) => failed(error, message));
      };
      abandon: Channel['abandon'] = (id, reason) => this.inner.abandon(id, reason);
      onStderr: Channel['onStderr'] = (listener) => this.inner.onStderr(listener);
      onExit: Channel['onExit'] = (listener) => this.inner.onExit(listener);
      setProtocolVersion: Channel['setProtocolVersion'] = (version) => this.inner.setProtocolVersion(version);
      setToolHeaders: Channel['setToolHeaders'] = (tools) => this.inner.setToolHeaders(tools);
      close = (graceMs?: number) => this.inner.close(graceMs);
      get info() {
        return this.inner.info;
      }
      get isOpen() {
        return this.inner.isOpen;
      }
    }
    const peer = new MemoryPeer(far);
    peer.handlers.set('initialize', (params) => ({ protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'mem', version: '1' } }));
    peer.handlers.set('tools/call', (params) => ({ content: [{ type: 'text', text: `called ${params.name}` }] }));
    const client = await McpClient.over(new Recording(near), { name: 'mem', protocolVersion: '2025-11-25' });
    clients.push(client);
    expect(textOf(await client.callTool('x'))).toBe('called x');
    expect(sent).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    const status: ExitStatus = { exitCode: 0 };
    expect(status.exitCode).toBe(0);
  });
});
