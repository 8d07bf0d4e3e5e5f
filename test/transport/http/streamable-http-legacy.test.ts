import { afterEach, describe, expect, it } from '@jest/globals';
import { StreamableHttpChannel } from '../../../src/transport/http/streamable-http.js';
import { closeReason, RawClient } from './raw-client.js';
import { abortedCalls, listen, startHandlerServer, startStatefulServer, type TestHttpServer } from './sdk-servers.js';
import { waitFor } from '../../support/fixtures.js';

describe('StreamableHttpChannel, legacy era, against the SDK v2 server', () => {
  const servers: TestHttpServer[] = [];
  const channels: StreamableHttpChannel[] = [];
  afterEach(async () => {
    await Promise.all(channels.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const open = (url: string, extra: Partial<ConstructorParameters<typeof StreamableHttpChannel>[0]> = {}) => {
    const channel = new StreamableHttpChannel({ url, name: 'remote', ...extra });
    channels.push(channel);
    return channel;
  };

  it('keeps the session id, relates progress to its call, and deletes the session at close', async () => {
    const server = await startStatefulServer();
    servers.push(server);
    const channel = open(server.url, { headers: { 'x-team': 'blue' } });
    const client = new RawClient(channel);
    const init = await client.initialize();
    expect(init.serverInfo.name).toBe('http-test');
    expect(channel.info.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.sessions()).toBe(1);

    const list = await client.request('tools/list');
    expect(list.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['count', 'echo', 'hold']);

    const call = await client.request('tools/call', { name: 'count', arguments: { to: 3 }, _meta: { progressToken: 'p1' } });
    expect(call.result.content[0].text).toBe('counted to 3');
    const progress = client.received.filter((r) => 'method' in r.message && r.message.method === 'notifications/progress');
    expect(progress.map((p) => p.context.relatedTo)).toEqual([call.id, call.id, call.id]);
    expect(client.received.find((r) => !('method' in r.message) && r.message.id === call.id)?.context.relatedTo).toBe(call.id);

    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts[0]?.headers['mcp-session-id']).toBeUndefined();
    expect(posts[0]?.headers['mcp-protocol-version']).toBeUndefined();
    for (const post of posts.slice(1)) {
      expect(post.headers['mcp-session-id']).toBe(channel.info.sessionId);
      expect(post.headers['mcp-protocol-version']).toBe('2025-11-25');
    }
    for (const request of server.requests) expect(request.headers['x-team']).toBe('blue');
    expect(posts[0]?.headers.accept).toBe('application/json, text/event-stream');
    // The GET stream for the server's own messages was opened after the handshake.
    expect(await waitFor(() => server.requests.some((r) => r.method === 'GET'))).toBe(true);

    const closed = closeReason(channel);
    await channel.close();
    expect((await closed).code).toBe('closed');
    expect(channel.isOpen).toBe(false);
    const del = server.requests.find((r) => r.method === 'DELETE');
    expect(del?.headers['mcp-session-id']).toBeDefined();
    expect(await waitFor(() => server.sessions() === 0)).toBe(true);
    await expect(client.request('ping')).rejects.toMatchObject({ code: 'closed' });
  });

  it('closes with peer-eof (status 404) when the session expires mid-run', async () => {
    const server = await startStatefulServer();
    servers.push(server);
    const channel = open(server.url);
    const client = new RawClient(channel);
    await client.initialize();
    await client.request('tools/list');
    const closed = closeReason(channel);
    server.expireSessions();
    const error = await client.request('tools/list').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'peer-eof', status: 404, server: 'remote' });
    expect((error as Error).message).toContain('next use starts a new session');
    expect(await closed).toBe(error);
    expect(channel.isOpen).toBe(false);
  });

  it('reuses keep-alive connections across calls', async () => {
    const server = await startStatefulServer();
    servers.push(server);
    const channel = open(server.url);
    const client = new RawClient(channel);
    await client.initialize();
    for (let i = 0; i < 20; i++) {
      const answer = await client.request('tools/call', { name: 'echo', arguments: { text: `n${i}` } });
      expect(answer.result.content[0].text).toBe(`n${i}`);
    }
    // 22 POSTs and a GET stream over a handful of sockets, not one each.
    expect(server.requests.length).toBeGreaterThanOrEqual(23);
    expect(server.connections).toBeLessThanOrEqual(4);
  });

  it('works against a stateless legacy server (no session, GET answered 405)', async () => {
    const server = await startHandlerServer();
    servers.push(server);
    const channel = open(server.url);
    const client = new RawClient(channel);
    await client.initialize();
    expect(channel.info.sessionId).toBeUndefined();
    const call = await client.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(call.result.content[0].text).toBe('hi');
    expect(await waitFor(() => server.requests.some((r) => r.method === 'GET'))).toBe(true);
    expect(channel.isOpen).toBe(true);
    await channel.close();
    expect(server.requests.some((r) => r.method === 'DELETE')).toBe(false);
  });

  it('abandon(id) tells the server with notifications/cancelled, which stops the tool (a closed stream is no cancellation in this era)', async () => {
    const server = await startStatefulServer();
    servers.push(server);
    const channel = open(server.url);
    const client = new RawClient(channel);
    await client.initialize();
    const progressed = () => client.received.some((r) => 'method' in r.message && r.message.method === 'notifications/progress');
    await channel.send({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'hold', arguments: { tag: 'legacy-77' }, _meta: { progressToken: 'p77' } } });
    expect(await waitFor(progressed)).toBe(true);
    channel.abandon(77, 'timed out');
    expect(await waitFor(() => abortedCalls.includes('legacy-77'), 10000)).toBe(true);
    expect(channel.isOpen).toBe(true);
    const echo = await client.request('tools/call', { name: 'echo', arguments: { text: 'still' } });
    expect(echo.result.content[0].text).toBe('still');
    expect(client.received.some((r) => !('method' in r.message) && r.message.id === 77)).toBe(false);
  });

  it('abandon(id) posts notifications/cancelled naming the request and the reason', async () => {
    const bodies: any[] = [];
    const server = await listen(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const message = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      bodies.push(message);
      // The call is never answered: its POST waits until the client gives up on it.
      if (message?.method === 'tools/call') return;
      res.writeHead(202).end();
    });
    servers.push(server);
    const channel = open(server.url);
    channel.setProtocolVersion('2025-11-25');
    const sent = channel.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'slow' } });
    expect(await waitFor(() => bodies.length === 1)).toBe(true);
    channel.abandon(9, 'the request timed out');
    expect(await waitFor(() => bodies.length === 2)).toBe(true);
    expect(bodies[1]).toEqual({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'the request timed out' } });
    // The POST it abandoned is ended too (the server would never answer it): send settles.
    await expect(sent).resolves.toBeUndefined();
  });
});
