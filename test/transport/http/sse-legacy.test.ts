import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SseLegacyChannel } from '../../../src/transport/http/sse-legacy.js';
import { closeReason, RawClient } from './raw-client.js';
import { listen, startSseServer, type TestHttpServer } from './sdk-servers.js';
import { waitFor } from '../../support/fixtures.js';

describe('SseLegacyChannel (2024-11-05 HTTP+SSE) against the SDK v1 SSE server', () => {
  const servers: TestHttpServer[] = [];
  const channels: SseLegacyChannel[] = [];
  afterEach(async () => {
    await Promise.all(channels.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('waits for the endpoint event, POSTs there, and reads answers from the stream; close ends the stream', async () => {
    const server = await startSseServer();
    servers.push(server);
    const channel = new SseLegacyChannel({ url: server.url, name: 'old', headers: { 'x-team': 'blue' } });
    channels.push(channel);
    const client = new RawClient(channel);
    const init = await client.initialize('2024-11-05');
    expect(init.serverInfo.name).toBe('sse-test');
    const call = await client.request('tools/call', { name: 'echo', arguments: { text: 'old times' } });
    expect(call.result.content[0].text).toBe('old times');
    const posts = server.requests.filter((r) => r.method === 'POST');
    expect(posts.length).toBe(3);
    for (const request of server.requests) expect(request.headers['x-team']).toBe('blue');
    expect(server.requests[0]?.headers.accept).toBe('text/event-stream');
    expect(server.openStreams()).toBe(1);
    const closed = closeReason(channel);
    await channel.close();
    expect((await closed).code).toBe('closed');
    expect(await waitFor(() => server.openStreams() === 0)).toBe(true);
    await expect(client.request('ping')).rejects.toMatchObject({ code: 'closed' });
  });

  it('64 POSTs in flight put no pile of abort listeners on one signal (Node 20 warns past 10)', async () => {
    const server = await startSseServer();
    servers.push(server);
    // The platform's fetch, watched: how many abort listeners the signal of each request carries once it is sent.
    let most = 0;
    const watched: typeof fetch = (input, init) => {
      const sent = fetch(input, init);
      if (init?.signal) most = Math.max(most, getEventListeners(init.signal, 'abort').length);
      return sent;
    };
    const channel = new SseLegacyChannel({ url: server.url, name: 'old', fetch: watched });
    channels.push(channel);
    const client = new RawClient(channel);
    await client.initialize('2024-11-05');
    await Promise.all(Array.from({ length: 64 }, () => client.request('ping')));
    expect(most).toBeLessThanOrEqual(2);
  });

  it('refuses an endpoint on another origin', async () => {
    const server = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: http://evil.invalid/messages\n\n');
    });
    servers.push(server);
    const channel = new SseLegacyChannel({ url: server.url, name: 'old' });
    channels.push(channel);
    const reason = await closeReason(channel);
    expect(reason).toMatchObject({ code: 'protocol-error', server: 'old' });
    expect(reason.message).toContain('another origin (http://evil.invalid)');
    await expect(channel.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toBe(reason);
  });

  it('closes with peer-eof when the server ends the stream, and connect-failed when the GET fails', async () => {
    const server = await listen((req, res) => {
      if (req.url === '/down') return void res.writeHead(503).end('maintenance');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: endpoint\ndata: /messages\n\n');
    });
    servers.push(server);
    const ends = new SseLegacyChannel({ url: server.url, name: 'old' });
    channels.push(ends);
    expect((await closeReason(ends)).code).toBe('peer-eof');
    const down = new SseLegacyChannel({ url: server.url.replace('/mcp', '/down'), name: 'old' });
    channels.push(down);
    const reason = await closeReason(down);
    expect(reason).toMatchObject({ code: 'connect-failed', status: 503 });
  });
});

describe('SseLegacyChannel limits', () => {
  it('an event over maxMessageBytes closes the channel with protocol-error', async () => {
    const server = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
      res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'z'.repeat(20_000) } })}\n\n`);
    });
    const channel = new SseLegacyChannel({ url: server.url, name: 'old', maxMessageBytes: 5_000 });
    try {
      const reason = await closeReason(channel);
      expect(reason).toMatchObject({ code: 'protocol-error', server: 'old' });
      expect(reason.message).toContain('5000-byte limit');
    } finally {
      await channel.close();
      await server.close();
    }
  });
});
