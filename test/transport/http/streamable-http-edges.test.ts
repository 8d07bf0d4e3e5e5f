import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { McpError } from '../../../src/errors.js';
import type { AuthProvider } from '../../../src/transport/http/auth-provider.js';
import { StreamableHttpChannel, type StreamableHttpOptions } from '../../../src/transport/http/streamable-http.js';
import { closeReason, RawClient } from './raw-client.js';
import { listen, type TestHttpServer } from './sdk-servers.js';
import { waitFor } from '../../support/fixtures.js';

async function bodyOf(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

const answer = (res: ServerResponse, id: unknown, result: object = {}) =>
  void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));

describe('StreamableHttpChannel edge behaviour (hand-written servers)', () => {
  const servers: TestHttpServer[] = [];
  const channels: StreamableHttpChannel[] = [];
  afterEach(async () => {
    await Promise.all(channels.splice(0).map((c) => c.close()));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  const serve = async (handle: Parameters<typeof listen>[0]) => {
    const server = await listen(handle);
    servers.push(server);
    return server;
  };
  const open = (url: string, extra: Partial<StreamableHttpOptions> = {}) => {
    const channel = new StreamableHttpChannel({ url, name: 'edge', retry: { baseDelayMs: 10 }, ...extra });
    channels.push(channel);
    return channel;
  };

  it('resumes a dropped SSE stream with Last-Event-ID after the server\'s retry delay', async () => {
    const server = await serve(async (req, res) => {
      if (req.method === 'POST') {
        const message = await bodyOf(req);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('retry: 50\nid: e0\ndata:\n\n');
        res.write(`id: e1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\n\n`);
        // Drop the stream before the answer: the client must come back for it.
        (server as unknown as { pendingId: unknown }).pendingId = message.id;
        return void res.end();
      }
      if (req.method === 'GET' && req.headers['last-event-id'] === 'e1') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const id = (server as unknown as { pendingId: unknown }).pendingId;
        return void res.end(`id: e2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resumed: true } })}\n\n`);
      }
      res.writeHead(405).end();
    });
    const channel = open(server.url);
    channel.setProtocolVersion('2025-11-25');
    const client = new RawClient(channel);
    const started = Date.now();
    const result = await client.request('tools/call', { name: 'slow' });
    expect(result.result).toEqual({ resumed: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(client.received.map((r) => r.context.relatedTo)).toEqual([result.id, result.id]);
    const get = server.requests.find((r) => r.method === 'GET');
    expect(get?.headers['last-event-id']).toBe('e1');
    expect(get?.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('gives up resuming after a bounded number of attempts', async () => {
    const server = await serve(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('retry: 10\nid: x\ndata:\n\n');
      if (req.method === 'POST') await bodyOf(req);
    });
    const channel = open(server.url, { maxReconnects: 2 });
    channel.setProtocolVersion('2025-11-25');
    await channel.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
    const { waitFor } = await import('../../support/fixtures.js');
    expect(await waitFor(() => server.requests.filter((r) => r.method === 'GET').length === 2)).toBe(true);
    // A negative: give a third attempt (10 ms retry) ample time to show up, then check it did not.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
    expect(channel.isOpen).toBe(true);
  });

  it('an unreachable URL is connect-failed, naming ECONNREFUSED, and closes the channel', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const channel = open(`http://127.0.0.1:${port}/mcp`);
    const closed = closeReason(channel);
    const error = await new RawClient(channel).request('initialize', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'connect-failed', server: 'edge', phase: 'connect' });
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect((await closed).code).toBe('connect-failed');
    expect(channel.isOpen).toBe(false);
  });

  it('a JSON body over maxMessageBytes closes the channel with protocol-error', async () => {
    const server = await serve(async (req, res) => {
      const message = await bodyOf(req);
      answer(res, message.id, { blob: 'x'.repeat(50_000) });
    });
    const channel = open(server.url, { maxMessageBytes: 10_000 });
    const closed = closeReason(channel);
    const error = await new RawClient(channel).request('tools/list').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'protocol-error' });
    expect((error as Error).message).toContain('10000-byte limit');
    expect((await closed).code).toBe('protocol-error');
  });

  it('an SSE event over maxMessageBytes stops the read and closes with protocol-error', async () => {
    let streamClosed = false;
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => {
        streamClosed = true;
      });
      // An endless event: the client must stop reading, not buffer it.
      const chunk = `data: ${'y'.repeat(16_000)}`;
      const pump = () => {
        if (!res.destroyed && res.write(chunk)) setImmediate(pump);
        else if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const channel = open(server.url, { maxMessageBytes: 100_000 });
    const reason = closeReason(channel);
    await channel.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big' } });
    expect((await reason).code).toBe('protocol-error');
    const { waitFor } = await import('../../support/fixtures.js');
    expect(await waitFor(() => streamClosed)).toBe(true);
  });

  it('HTTP errors reject that send with status; the channel stays open', async () => {
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
    });
    const channel = open(server.url);
    const error = await new RawClient(channel).request('tools/call', { name: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connect-failed', status: 500 });
    expect((error as Error).message).toContain('HTTP 500: boom');
    expect(channel.isOpen).toBe(true);
  });

  it('a JSON-RPC error answered with HTTP 400 is delivered as the answer', async () => {
    const server = await serve(async (req, res) => {
      const message = await bodyOf(req);
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'bad version' } }));
    });
    const answer = await new RawClient(open(server.url)).request('server/discover');
    expect(answer.error).toEqual({ code: -32602, message: 'bad version' });
  });

  it('retries idempotent requests on 503, a bounded number of times, and never tools/call', async () => {
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(503).end('busy');
    });
    const client = new RawClient(open(server.url, { retry: { attempts: 2, baseDelayMs: 5 } }));
    await expect(client.request('tools/list')).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(3);
    await expect(client.request('tools/call', { name: 'x' })).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(4);
  });

  it('sends the AuthProvider\'s header, and on 401 asks it once and retries', async () => {
    const server = await serve(async (req, res) => {
      const message = await bodyOf(req);
      if (req.headers.authorization !== 'Bearer fresh') {
        return void res.writeHead(401, { 'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/x"' }).end();
      }
      answer(res, message.id, { ok: true });
    });
    const challenges: unknown[] = [];
    let token = 'Bearer stale';
    const auth: AuthProvider = {
      authorization: async () => token,
      unauthorized: async (challenge) => {
        challenges.push(challenge);
        token = 'Bearer fresh';
        return 'retry';
      },
    };
    const answer1 = await new RawClient(open(server.url, { auth })).request('tools/list');
    expect(answer1.result).toEqual({ ok: true });
    expect(challenges).toEqual([{ status: 401, wwwAuthenticate: 'Bearer resource_metadata="http://127.0.0.1/x"', resourceUrl: new URL(server.url), authorization: 'Bearer stale' }]);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer stale', 'Bearer fresh']);
  });

  it('a 403 insufficient_scope goes to the AuthProvider; its rejection is the request\'s', async () => {
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="repo"' }).end();
    });
    const refusal = new McpError('auth-required', 'server "edge": needs login(server)', { server: 'edge', phase: 'auth' });
    const auth: AuthProvider = { authorization: async () => 'Bearer t', unauthorized: async () => Promise.reject(refusal) };
    const error = await new RawClient(open(server.url, { auth })).request('tools/call', { name: 'x' }).catch((e: unknown) => e);
    expect(error).toBe(refusal);
  });

  it('a 401 without an AuthProvider is auth-required with the status', async () => {
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(401).end();
    });
    const error = await new RawClient(open(server.url)).request('tools/list').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'auth-required', status: 401 });
  });

  it('skips a body that is not JSON-RPC as noise', async () => {
    const server = await serve(async (req, res) => {
      await bodyOf(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('hello');
    });
    const channel = open(server.url);
    const noise: string[] = [];
    channel.onNoise((text) => noise.push(text));
    await channel.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(noise).toEqual(['hello']);
  });

  it('delivers the GET stream\'s messages unrelated to any request, once the session is initialized', async () => {
    const server = await serve(async (req, res) => {
      if (req.method === 'POST') {
        const message = await bodyOf(req);
        if (message.id === undefined) return void res.writeHead(202).end();
        return void res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } } }));
      }
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write(`id: g1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
      }
      res.writeHead(405).end();
    });
    const channel = open(server.url);
    const client = new RawClient(channel);
    await client.initialize();
    const { waitFor } = await import('../../support/fixtures.js');
    expect(await waitFor(() => client.received.length === 2)).toBe(true);
    expect(client.received[1]).toEqual({ message: { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }, context: {} });
    const get = server.requests.find((r) => r.method === 'GET');
    expect(get?.headers).toMatchObject({ accept: 'text/event-stream', 'mcp-session-id': 's-1', 'mcp-protocol-version': '2025-11-25' });
    expect(get?.headers['last-event-id']).toBeUndefined();
  });

  it('leaves nothing on the channel for each request: no AbortSignal.any dependant on its lifetime signal (Node 20 keeps those)', async () => {
    const server = await serve(async (req, res) => {
      const message = await bodyOf(req);
      if (message?.id === undefined) return void res.writeHead(202).end();
      answer(res, message.id, { ok: true });
    });
    const channel = open(server.url);
    channel.setProtocolVersion('2025-11-25');
    const client = new RawClient(channel);
    for (let i = 0; i < 50; i++) expect((await client.request('ping')).result).toEqual({ ok: true });
    await client.notify('notifications/progress', { progressToken: 1, progress: 1 });
    const lifetime = (channel as unknown as { lifetime: AbortController }).lifetime.signal;
    const dependants = Object.getOwnPropertySymbols(lifetime).find((symbol) => symbol.description === 'kDependantSignals');
    const held = dependants === undefined ? 0 : ((lifetime as unknown as Record<symbol, Set<unknown> | undefined>)[dependants]?.size ?? 0);
    expect(held).toBe(0);
    // And closing still ends a request in flight.
    const hanging = await serve(async (req) => void (await bodyOf(req)));
    const stuck = open(hanging.url);
    stuck.setProtocolVersion('2025-11-25');
    let sent = false;
    const sending = stuck.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow' } }).then(() => (sent = true));
    expect(await waitFor(() => hanging.requests.length === 1)).toBe(true);
    expect(sent).toBe(false);
    await stuck.close();
    expect(await waitFor(() => sent, 2000)).toBe(true);
    await sending;
  });
});
