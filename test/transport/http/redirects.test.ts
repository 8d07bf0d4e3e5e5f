import type { IncomingMessage } from 'node:http';
import { McpError } from '../../../src/errors.js';
import { createHttpChannel } from '../../../src/transport/http/create-http-channel.js';
import { exchange, exchangeConfig } from '../../../src/transport/http/http-exchange.js';
import { listen, type TestHttpServer } from './sdk-servers.js';

const servers: TestHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

/** "Another host": a loopback server on its own port recording what reaches it. */
async function otherHost() {
  const seen: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const server = await listen(async (req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers, body: await body(req) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
  });
  servers.push(server);
  return { url: server.url, seen };
}

/** The MCP server: `/mcp` answers with `status` and a Location of `location(ownUrl)`; `/moved` answers the request. */
async function redirecting(status: number, location: (own: string) => string) {
  const arrived: { method: string; body: string; key: string | undefined }[] = [];
  const server = await listen(async (req, res) => {
    const text = await body(req);
    if (req.url === '/mcp') return void res.writeHead(status, { location: location(server.url) }).end();
    arrived.push({ method: req.method ?? '', body: text, key: req.headers['x-api-key'] as string | undefined });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{"moved":true}}');
  });
  servers.push(server);
  return { url: server.url, arrived };
}

const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pay', arguments: { card: '4111 1111 1111 1111' } } });
const config = (url: string) => exchangeConfig({ url, name: 'api', headers: { 'x-api-key': 'k-secret' } }, { attempts: 0, baseDelayMs: 1 });
const post = (url: string) => exchange(config(url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: call, signal: new AbortController().signal, idempotent: false, label: 'tools/call' });

describe('MCP requests and redirects (item 4)', () => {
  it.each([307, 308, 302, 301])('a %d to another origin is not followed: neither the header secrets nor the body go there', async (status) => {
    const other = await otherHost();
    const server = await redirecting(status, () => other.url);
    const error = await post(server.url).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'connect-failed', server: 'api', status });
    expect((error as McpError).message).toBe(
      `server "api": tools/call was redirected (HTTP ${status}) to another origin, ${new URL(other.url).origin}; not following it with the server's headers and the request body: put the new URL in the config if it is right`,
    );
    expect(other.seen).toEqual([]);
  });

  it('a same-origin 307 or 308 is followed with the method, headers and body', async () => {
    for (const status of [307, 308]) {
      const server = await redirecting(status, (own) => own.replace('/mcp', '/moved'));
      const response = await post(server.url);
      expect(await response.json()).toMatchObject({ result: { moved: true } });
      expect(server.arrived).toEqual([{ method: 'POST', body: call, key: 'k-secret' }]);
    }
  });

  it('a same-origin 302 of a POST is refused (it would drop the body), of a GET followed', async () => {
    const server = await redirecting(302, (own) => own.replace('/mcp', '/moved'));
    const error = await post(server.url).then(() => undefined, (e: unknown) => e);
    expect((error as McpError).message).toBe("server \"api\": tools/call was answered HTTP 302 (a redirect that would drop the POST's body); only 307 and 308 are followed for it");
    const got = await exchange(config(server.url), { method: 'GET', headers: {}, signal: new AbortController().signal, idempotent: true, label: 'GET stream' });
    expect(got.status).toBe(200);
    expect(server.arrived).toEqual([{ method: 'GET', body: '', key: 'k-secret' }]);
  });

  it('a redirect loop ends', async () => {
    const server = await redirecting(307, (own) => own);
    const error = await post(server.url).then(() => undefined, (e: unknown) => e);
    expect((error as McpError).message).toBe('server "api": tools/call was redirected more than 5 times');
  });

  it('through a channel: the send fails clearly and the other host sees nothing', async () => {
    const other = await otherHost();
    const server = await redirecting(307, () => `${other.url}?steal=1`);
    const channel = createHttpChannel({ transport: 'http', url: server.url, headers: { 'x-api-key': 'k-secret' } }, { name: 'api' });
    try {
      const error = await channel.send(JSON.parse(call)).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'connect-failed', server: 'api' });
      expect(other.seen).toEqual([]);
    } finally {
      await channel.close();
    }
  });
});
