import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { McpServerManager } from '../../src/manager/manager.js';
import { type ServedGateway, serveGateway } from '../../src/gateway/serve-gateway.js';
import type { HttpListenerOptions } from '../../src/gateway/http-listener.js';
import { cliPath, fixtureConfig } from '../cli/run-cli.js';
import { fixture } from '../support/fixtures.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serving(http: HttpListenerOptions = {}) {
  const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs') } });
  cleanups.push(() => manager.shutdown());
  const served: ServedGateway = await serveGateway(manager, { transport: 'http', http });
  cleanups.push(() => served.close());
  return { manager, served, url: served.url! };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
const initialize = (id: number) => ({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
const modern = { 'mcp-protocol-version': '2026-07-28' };

describe('the HTTP gateway answers a message that is not JSON-RPC (item 12)', () => {
  it('a request whose method is not a string gets -32600 with its id, not 202 and silence', async () => {
    const { url } = await serving();
    const stateless = await post(url, { jsonrpc: '2.0', id: 7, method: 42 }, modern);
    expect(stateless.status).toBe(400);
    expect(await stateless.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request: "method" must be a string, got 42 (number)' } });

    const opened = await post(url, initialize(1));
    const session = opened.headers.get('mcp-session-id')!;
    await opened.body?.cancel();
    const inSession = await post(url, { jsonrpc: '2.0', id: 8, method: { name: 'tools/list' } }, { 'mcp-session-id': session });
    expect(inSession.status).toBe(400);
    expect(await inSession.json()).toMatchObject({ id: 8, error: { code: -32600 } });
    const noMethod = await post(url, { jsonrpc: '2.0', id: 9 }, { 'mcp-session-id': session });
    expect(noMethod.status).toBe(400);
    expect(await noMethod.json()).toMatchObject({ id: 9, error: { code: -32600, message: 'Invalid Request: the message has no "method", "result" or "error"' } });
    const badId = await post(url, { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, { 'mcp-session-id': session });
    expect(await badId.json()).toMatchObject({ id: null, error: { code: -32600 } });
    // The session still works.
    const ping = await post(url, { jsonrpc: '2.0', id: 10, method: 'ping' }, { 'mcp-session-id': session, accept: 'application/json' });
    expect(await ping.json()).toMatchObject({ id: 10, result: {} });
  });
});

describe('the stdio gateway and a message over the limit (item 12)', () => {
  it('ends with the reason on stderr and a non-zero status, not a silent exit 0', async () => {
    const child = spawn(process.execPath, [cliPath, 'serve', '--config', fixtureConfig('gateway-two.json')], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.stdin.on('error', () => {}); // the gateway stops reading: EPIPE is expected
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
    for (let i = 0; i < 65 && child.exitCode === null; i++) {
      if (child.stdin.write(chunk)) continue;
      await new Promise<void>((resolve) => {
        const go = () => {
          child.stdin.off('drain', go);
          child.off('exit', go);
          resolve();
        };
        child.stdin.once('drain', go);
        child.once('exit', go);
      });
    }
    child.stdin.end();
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref())]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/lazy-mcp serve: message exceeds the limit of 67108864 bytes \(maxMessageBytes\)/);
  });
});

/** A POST from a given loopback source address, standing for a distinct client. */
function postFrom(localAddress: string, url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('the HTTP gateway caps its sessions (item 6)', () => {
  it('per client and in total, each refusal a clear JSON-RPC error; an ended session frees its place', async () => {
    const { url, served } = await serving({ maxSessions: 3, maxSessionsPerClient: 2 });
    const a1 = await postFrom('127.0.0.1', url, initialize(1));
    const a2 = await postFrom('127.0.0.1', url, initialize(2));
    expect([a1.status, a2.status]).toEqual([200, 200]);
    const a3 = await postFrom('127.0.0.1', url, initialize(3));
    expect(a3.status).toBe(429);
    expect(JSON.parse(a3.body)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32000, message: 'this client has 2 sessions open, the most one client may (maxSessionsPerClient); end one with DELETE or retry later' },
    });
    expect((await postFrom('127.0.0.2', url, initialize(4))).status).toBe(200);
    const full = await postFrom('127.0.0.3', url, initialize(5));
    expect(full.status).toBe(503);
    expect(full.headers['retry-after']).toBe('300');
    expect(JSON.parse(full.body).error.message).toBe('the gateway has 3 sessions open, the most it serves at once (maxSessions); retry later');
    expect(served.gateway.connectionCount).toBe(3);

    // A stateless 2026 request needs no session: it is served even now.
    const stateless = await post(url, { jsonrpc: '2.0', id: 6, method: 'ping', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } }, { ...modern, accept: 'application/json' });
    expect(stateless.status).toBe(200);
    await stateless.body?.cancel();

    const ended = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': a1.headers['mcp-session-id'] as string } });
    expect(ended.status).toBe(204);
    expect((await postFrom('127.0.0.3', url, initialize(7))).status).toBe(200);
  });

  it('refuses nonsense caps, naming the option', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: {} });
    cleanups.push(() => manager.shutdown());
    const error = await serveGateway(manager, { transport: 'http', http: { maxSessions: 0 } }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('`maxSessions` must be a positive whole number, got 0 (number)');
  });
});
