import { createServer } from 'node:net';
import { McpServerManager } from '../../src/manager/manager.js';
import { DISCOVER_PROBE_MS } from '../../src/protocol/client.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { startHandlerServer, startSseServer, startStatefulServer, type TestHttpServer } from '../transport/http/sdk-servers.js';
import { fixture, textOf, waitFor } from '../support/fixtures.js';

/** A 127.0.0.1 port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('remote servers through the manager (SDK v2 Streamable HTTP, SDK v1 HTTP+SSE, on 127.0.0.1)', () => {
  const servers: TestHttpServer[] = [];
  const managers: McpServerManager[] = [];
  const track = (m: McpServerManager) => (managers.push(m), m);
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it.each([
    ['a legacy Streamable HTTP server', startStatefulServer, 'http'],
    ['an HTTP+SSE server', startSseServer, 'sse'],
  ] as const)('shutdown() closes the HTTP connections to %s (no keep-alive socket left open)', async (_name, start, type) => {
    const server = await start();
    servers.push(server);
    let open = 0;
    (server as unknown as { server: import('node:http').Server }).server.on('connection', (socket) => {
      open++;
      socket.once('close', () => open--);
    });
    const manager = track(McpServerManager.fromConfig({ mcpServers: { web: { type, url: server.url } } }));
    await Promise.all([1, 2, 3].map((i) => manager.callServerTool('web', 'echo', { text: String(i) })));
    expect(open).toBeGreaterThan(0);
    await manager.shutdown();
    // Well before any keep-alive timeout (4-5 s) would close them.
    expect(await waitFor(() => open === 0, 1000)).toBe(true);
  });

  it('lists and calls the tools of a stateless 2026 server, with headers and progress; status names transport, url and era', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const manager = track(McpServerManager.fromConfig({ mcpServers: { modern: { type: 'http', url: server.url, headers: { 'X-Team': 'blue' } } } }));
    expect(manager.status().modern).toEqual({ state: 'idle', transport: 'http', url: server.url, restarts: 0 });
    const names = (await manager.listTools()).map((t) => t.name).sort();
    expect(names).toEqual(['mcp__modern__count', 'mcp__modern__echo', 'mcp__modern__hold']);
    expect(textOf(await manager.callTool('mcp__modern__echo', { text: 'hi' }))).toBe('hi');
    const progress: number[] = [];
    const counted = await manager.callServerTool('modern', 'count', { to: 3 }, { onProgress: (p) => progress.push(p.progress) });
    expect(textOf(counted)).toBe('counted to 3');
    expect(progress).toEqual([1, 2, 3]);
    const status = manager.status().modern;
    expect(status).toMatchObject({ state: 'ready', transport: 'http', url: server.url, era: '2026', protocolVersion: '2026-07-28', tools: 3 });
    expect(status.pid).toBeUndefined();
    expect(server.requests.filter((r) => r.method === 'POST').every((r) => r.headers['x-team'] === 'blue')).toBe(true);
  });

  it('speaks the legacy era to a stateful server; an idle stop DELETEs the session and the next call opens a new one', async () => {
    const server = await startStatefulServer();
    servers.push(server);
    const manager = track(McpServerManager.fromConfig({ mcpServers: { old: { type: 'streamable-http', url: server.url, idleTimeout: 300 } } }));
    const started = performance.now();
    expect(textOf(await manager.callServerTool('old', 'echo', { text: 'one' }))).toBe('one');
    // The SDK refuses the server/discover probe with a 400 whose error has id null: that is the probe's answer, not a wait for its time-out.
    expect(performance.now() - started).toBeLessThan(DISCOVER_PROBE_MS);
    expect(manager.status().old).toMatchObject({ state: 'ready', era: 'legacy', transport: 'http' });
    expect(server.sessions()).toBe(1);
    expect(await waitFor(() => manager.status().old.state === 'stopped', 10_000)).toBe(true);
    expect(await waitFor(() => server.sessions() === 0, 5000)).toBe(true);
    expect(server.requests.some((r) => r.method === 'DELETE' && typeof r.headers['mcp-session-id'] === 'string')).toBe(true);
    expect(textOf(await manager.callServerTool('old', 'echo', { text: 'two' }))).toBe('two');
    expect(server.sessions()).toBe(1);
    expect(manager.status().old.restarts).toBe(1);
  });

  it('runs an HTTP+SSE (2024-11-05) server', async () => {
    const server = await startSseServer();
    servers.push(server);
    const manager = track(McpServerManager.fromConfig({ mcpServers: { sse: { type: 'sse', url: server.url } } }));
    expect((await manager.listTools()).map((t) => t.name)).toEqual(['mcp__sse__echo']);
    expect(textOf(await manager.callTool('mcp__sse__echo', { text: 'via sse' }))).toBe('via sse');
    expect(manager.status().sse).toMatchObject({ state: 'ready', transport: 'sse', url: server.url, era: 'legacy' });
    await manager.shutdown();
    expect(await waitFor(() => server.openStreams() === 0, 5000)).toBe(true);
  });

  it('one manager mixes a stdio server and HTTP servers of both eras', async () => {
    const modern = await startHandlerServer();
    const legacy = await startStatefulServer();
    servers.push(modern, legacy);
    const manager = track(
      McpServerManager.fromConfig({
        mcpServers: { local: fixture('echo-server.mjs'), modern: { type: 'http', url: modern.url }, legacy: { url: legacy.url, startup: 'eager' } },
      }),
    );
    const ready = await waitFor(() => manager.status().legacy.state === 'ready', 10_000);
    expect(manager.status().legacy).toMatchObject({ state: 'ready' });
    expect(ready).toBe(true);
    const tools = await manager.listTools();
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(['local', 'modern', 'legacy']));
    expect(textOf(await manager.callTool('mcp__modern__echo', { text: 'm' }))).toBe('m');
    expect(textOf(await manager.callTool('mcp__legacy__echo', { text: 'l' }))).toBe('l');
    const local = tools.find((t) => t.server === 'local')!;
    await expect(manager.callTool(local.name, { text: 's' })).resolves.toMatchObject({ content: expect.any(Array) });
    const status = manager.status();
    expect(status.local).toMatchObject({ state: 'ready', transport: 'stdio', pid: expect.any(Number) });
    expect(status.modern).toMatchObject({ state: 'ready', era: '2026' });
    expect(status.legacy).toMatchObject({ state: 'ready', era: 'legacy' });
  });

  it('an unreachable URL is connect-failed: the call rejects, listings leave the server out, status says why', async () => {
    const port = await closedPort();
    const good = await startHandlerServer();
    servers.push(good);
    const url = `http://127.0.0.1:${port}/mcp`;
    const states: ManagerEvents['stateChange'][] = [];
    const manager = track(McpServerManager.fromConfig({ mcpServers: { gone: { type: 'http', url, timeout: 5000 }, up: { type: 'http', url: good.url } } }));
    manager.on('stateChange', (e: ManagerEvents['stateChange']) => states.push(e));
    await expect(manager.callServerTool('gone', 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'connect-failed', server: 'gone' });
    expect(manager.status().gone).toMatchObject({ state: 'backoff', transport: 'http', url, lastError: expect.objectContaining({ code: 'connect-failed' }) });
    expect(manager.status().gone.lastError!.message).toContain(`127.0.0.1:${port}`);
    expect(states.filter((e) => e.server === 'gone').map((e) => e.to)).toEqual(['starting', 'backoff']);
    const listed = await manager.listTools();
    expect(listed.every((t) => t.server === 'up')).toBe(true);
    expect(listed).toHaveLength(3);
  });

  it('a message over maxMessageBytes from an HTTP server is a protocol-error, not a hang', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const manager = track(McpServerManager.fromConfig({ mcpServers: { big: { type: 'http', url: server.url } } }, { maxMessageBytes: 4096 }));
    await manager.listTools();
    await expect(manager.callServerTool('big', 'echo', { text: 'x'.repeat(10_000) })).rejects.toMatchObject({ code: 'protocol-error' });
  });
});
