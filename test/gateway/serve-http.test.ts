import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServerManager } from '../../src/manager/manager.js';
import { type ServeGatewayOptions, type ServedGateway, serveGateway } from '../../src/gateway/serve-gateway.js';
import type { HttpListenerOptions } from '../../src/gateway/http-listener.js';
import { cliPath, fixtureConfig } from '../cli/run-cli.js';
import { fixture, isAlive, textOf, waitFor } from '../support/fixtures.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serving(http: HttpListenerOptions = {}, options: ServeGatewayOptions = {}) {
  const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs') } });
  cleanups.push(() => manager.shutdown());
  const starts: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  const served: ServedGateway = await serveGateway(manager, { ...options, transport: 'http', http });
  cleanups.push(() => served.close());
  return { manager, served, url: served.url!, starts };
}

async function connect(url: string, era: 'legacy' | '2026', init: RequestInit = {}) {
  const client = new Client({ name: 'http-test', version: '1.0.0' }, era === '2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: init });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

/** Polls an async check until it holds, at most `ms`. */
async function waitForAsync(check: () => Promise<boolean>, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A raw request with headers fetch will not let us set (Host). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } });

describe.each(['legacy', '2026'] as const)('lazy-mcp serve --http with the SDK v2 StreamableHTTPClientTransport (%s era)', (era) => {
  it('lists the tools, calls one with progress, and starts only its server', async () => {
    const { url, starts } = await serving();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client, transport } = await connect(url, era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === '2026' ? '2026-07-28' : '2025-11-25');
    if (era === 'legacy') expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(starts).toEqual([]);
    const seen: number[] = [];
    const result = await client.callTool({ name: 'mcp__b__slow', arguments: { ms: 90, interval: 30 } }, { onprogress: (p) => seen.push(p.progress) });
    expect(textOf(result as { content: unknown[] })).toBe('done');
    expect(seen).toEqual([1, 2, 3]);
    expect(starts).toEqual(['b']);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__a__echo', 'mcp__b__echo']));
    const failed = await client.callTool({ name: 'mcp__a__nope', arguments: {} }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: -32602, data: { code: 'unknown-tool', server: 'a' } });
  });

  it("a client's cancel reaches the backend", async () => {
    const { url } = await serving();
    const { client } = await connect(url, era);
    const abort = new AbortController();
    const call = client.callTool({ name: 'mcp__a__slow', arguments: { ms: 20000, interval: 20 } }, { signal: abort.signal, onprogress: () => abort.abort() });
    await expect(call).rejects.toThrow();
    let received: unknown[] = [];
    await waitForAsync(async () => {
      received = JSON.parse(textOf((await client.callTool({ name: 'mcp__a__cancellations', arguments: {} })) as { content: unknown[] }));
      return received.length > 0;
    });
    expect(received).toHaveLength(1);
  });
});

describe('the HTTP gateway', () => {
  it('refuses a foreign Host or Origin (DNS rebinding) and accepts the loopback ones', async () => {
    const { url } = await serving();
    const port = new URL(url).port;
    expect((await rawPost(url, { host: `evil.example:${port}` }, discover)).status).toBe(403);
    expect((await rawPost(url, { origin: 'http://evil.example' }, discover)).status).toBe(403);
    expect((await rawPost(url, { host: `localhost:${port}`, origin: `http://localhost:${port}` }, discover)).status).toBe(200);
  });

  it('with a token, refuses requests without it', async () => {
    const { url } = await serving({ token: 's3cret' });
    const refused = await rawPost(url, {}, discover);
    expect(refused.status).toBe(401);
    expect((await rawPost(url, { authorization: 'Bearer wrong!' }, discover)).status).toBe(401);
    const { client } = await connect(url, '2026', { headers: { authorization: 'Bearer s3cret' } });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('legacy sessions: a backend tools/list_changed reaches the client on its GET stream', async () => {
    const { url } = await serving();
    const { client } = await connect(url, 'legacy');
    let changes = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changes++);
    await client.callTool({ name: 'mcp__a__tools_changed', arguments: {} });
    await waitForAsync(async () => changes > 0, 5000);
    expect(changes).toBeGreaterThan(0);
  });

  it('legacy sessions: an unknown session id is 404, DELETE ends the session', async () => {
    const { url } = await serving();
    expect((await rawPost(url, { 'mcp-session-id': 'nope' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))).status).toBe(404);
    const { transport } = await connect(url, 'legacy');
    const id = transport.sessionId!;
    await transport.terminateSession();
    expect((await rawPost(url, { 'mcp-session-id': id }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }))).status).toBe(404);
    expect((await rawPost(url, {}, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }))).status).toBe(400);
  });

  it('refuses a body over the limit, a body that is not JSON, a batch, another path and other methods', async () => {
    const { url } = await serving({ maxBodyBytes: 1000 });
    expect((await rawPost(url, {}, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2000) } }))).status).toBe(413);
    const notJson = await rawPost(url, {}, '{nope');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body)).toMatchObject({ error: { code: -32700 } });
    expect((await rawPost(url, {}, '[]')).status).toBe(400);
    expect((await rawPost(url.replace('/mcp', '/other'), {}, discover)).status).toBe(404);
    expect((await fetch(url, { method: 'PUT' })).status).toBe(405);
    expect((await fetch(url, { method: 'GET' })).status).toBe(405);
  });

  it('ends a legacy session left idle (a client gone without DELETE)', async () => {
    const { url, served } = await serving({ sessionIdleMs: 200 });
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const opened = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: init });
    const id = opened.headers.get('mcp-session-id')!;
    expect(await opened.json()).toMatchObject({ result: { protocolVersion: '2025-06-18' } });
    expect(served.gateway.connectionCount).toBe(1);
    expect(await waitFor(() => served.gateway.connectionCount === 0, 5000, 20)).toBe(true);
    expect((await rawPost(url, { 'mcp-session-id': id }, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }))).status).toBe(404);
  });

  it('2026 requests are stateless: a client alternating between two gateways of one config gets the same answers', async () => {
    const first = await serving();
    const second = await serving();
    const call = (url: string, id: number) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'mcp__a__add', arguments: { a: id, b: 1 }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'lb', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
        }),
      }).then((r) => r.json() as Promise<{ result: { structuredContent: { sum: number }; resultType: string } }>);
    const answers = [];
    for (let i = 1; i <= 4; i++) answers.push(await call(i % 2 ? first.url : second.url, i));
    expect(answers.map((a) => a.result.structuredContent.sum)).toEqual([2, 3, 4, 5]);
    expect(answers.every((a) => a.result.resultType === 'complete')).toBe(true);
    expect(first.starts).toEqual(['a']);
    expect(second.starts).toEqual(['a']);
    // Each request was its own connection, closed once answered.
    expect(first.served.gateway.connectionCount + second.served.gateway.connectionCount).toBe(0);
  });
});

describe('the HTTP gateway: a backend asks a stateless 2026 client through input_required rounds', () => {
  it("each round is its own HTTP request; the client's answer reaches the waiting backend call", async () => {
    const manager = McpServerManager.fromConfig(
      { mcpServers: { hf: fixture('host-features.mjs'), sdk: fixture('sdk2-modern-server.mjs') } },
      { capabilities: { elicitation: true, sampling: true } },
    );
    cleanups.push(() => manager.shutdown());
    const served = await serveGateway(manager, { transport: 'http' });
    cleanups.push(() => served.close());
    const client = new Client({ name: 'http-mrtr', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} }, sampling: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => (asked.push(String(request.params.message)), { action: 'accept', content: { name: 'Ada', sure: true } }));
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'm' }));
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url!)));
    cleanups.push(() => client.close());
    const legacy = await client.callTool({ name: 'mcp__hf__ask', arguments: { message: 'Name?' } });
    expect(JSON.parse(textOf(legacy as { content: unknown[] }))).toMatchObject({ result: { action: 'accept', content: { name: 'Ada' } } });
    const sampled = await client.callTool({ name: 'mcp__hf__sample', arguments: {} });
    expect(JSON.parse(textOf(sampled as { content: unknown[] }))).toMatchObject({ result: { content: { text: 'sampled' } } });
    const modern = await client.callTool({ name: 'mcp__sdk__confirm', arguments: { what: 'ship' } });
    expect(textOf(modern as { content: unknown[] })).toBe('accept: {"name":"Ada","sure":true} state=state for ship');
    expect(asked).toEqual(['Name?', 'Really ship?']);
    expect(served.gateway.rounds.size).toBe(0);
    // Stateless: no connection outlived its request, yet each call went on across its rounds.
    expect(await waitFor(() => served.gateway.connectionCount === 0, 5000, 20)).toBe(true);
  });
});

/** The JSON-RPC messages of an SSE body, read as they come; `next()` waits (bounded) for the next one. */
function sseMessages(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queued: Record<string, unknown>[] = [];
  const next = async (ms = 10000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + ms;
    while (queued.length === 0) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (data) queued.push(JSON.parse(data) as Record<string, unknown>);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`no SSE message within ${ms} ms`);
      const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no SSE message within ${ms} ms`)), Math.max(1, deadline - Date.now())).unref());
      const { value, done } = await Promise.race([reader.read(), timer]);
      if (done) throw new Error('the SSE stream ended');
      buffer += decoder.decode(value, { stream: true });
    }
    return queued.shift()!;
  };
  return { next };
}

describe('the HTTP gateway to a legacy client whose POST accepts text/event-stream', () => {
  async function session(capabilities: object) {
    const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs'), hf: fixture('host-features.mjs') } }, { capabilities: { elicitation: true } });
    cleanups.push(() => manager.shutdown());
    const served = await serveGateway(manager, { transport: 'http' });
    cleanups.push(() => served.close());
    const url = served.url!;
    const post = (body: object, headers: Record<string, string> = {}, accept = 'application/json, text/event-stream') =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept, ...headers }, body: JSON.stringify(body) });
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } } });
    const sessionId = opened.headers.get('mcp-session-id')!;
    expect(opened.headers.get('content-type')).toContain('text/event-stream');
    expect(await sseMessages(opened).next()).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } });
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    return { post: (body: object, accept?: string) => post(body, headers, accept) };
  }

  it("answers a call with progress as an SSE stream on that POST: its progress, then its result (no GET stream needed)", async () => {
    const { post } = await session({});
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mcp__a__slow', arguments: { ms: 90, interval: 30 }, _meta: { progressToken: 'p1' } } });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const stream = sseMessages(response);
    const messages = [await stream.next(), await stream.next(), await stream.next(), await stream.next()];
    expect(messages.slice(0, 3).map((m) => m.method)).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress']);
    expect(messages.slice(0, 3).map((m) => (m.params as { progressToken: string; progress: number }).progress)).toEqual([1, 2, 3]);
    expect(messages[3]).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'done' }] } });
  });

  it("sends a backend's question on the POST stream of the call it is about; the client's answer (a POST) reaches the backend", async () => {
    const { post } = await session({ elicitation: {} });
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mcp__hf__ask', arguments: { message: 'Name?' } } });
    const stream = sseMessages(response);
    const question = await stream.next();
    expect(question).toMatchObject({ method: 'elicitation/create', params: { message: 'Name?' } });
    expect((await post({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { name: 'Raw' } } })).status).toBe(202);
    const answer = await stream.next();
    expect(answer).toMatchObject({ id: 1, result: { content: [{ type: 'text' }] } });
    expect(JSON.parse((answer.result as { content: { text: string }[] }).content[0].text)).toMatchObject({ result: { action: 'accept', content: { name: 'Raw' } } });
  });

  it("real clients (SDK v2 and v1, legacy era) answer a backend's question and get the call's progress and result", async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs'), hf: fixture('host-features.mjs') } }, { capabilities: { elicitation: true } });
    cleanups.push(() => manager.shutdown());
    const served = await serveGateway(manager, { transport: 'http' });
    cleanups.push(() => served.close());
    const v2 = new Client({ name: 'v2-legacy', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    v2.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Vee Two' } }));
    await v2.connect(new StreamableHTTPClientTransport(new URL(served.url!)));
    cleanups.push(() => v2.close());
    expect(JSON.parse(textOf((await v2.callTool({ name: 'mcp__hf__ask', arguments: {} })) as { content: unknown[] }))).toMatchObject({ result: { content: { name: 'Vee Two' } } });

    const { Client: V1Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport: V1Http } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const v1 = new V1Client({ name: 'v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    v1.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Vee One' } }));
    await v1.connect(new V1Http(new URL(served.url!)));
    cleanups.push(() => v1.close());
    expect(JSON.parse(textOf((await v1.callTool({ name: 'mcp__hf__ask', arguments: {} })) as { content: unknown[] }))).toMatchObject({ result: { content: { name: 'Vee One' } } });
    const seen: number[] = [];
    const slow = await v1.callTool({ name: 'mcp__a__slow', arguments: { ms: 300, interval: 100 } }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(textOf(slow as { content: unknown[] })).toBe('done');
    expect(seen[0]).toBe(1);
  });

  it('a JSON-only POST with no GET stream cannot take a question: the backend is told at once instead of the call hanging', async () => {
    const { post } = await session({ elicitation: {} });
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mcp__hf__ask', arguments: {} } }, 'application/json');
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: 1 });
    expect(JSON.stringify(body)).toContain('no stream open');
  });
});

describe('lazy-mcp serve --http (the CLI)', () => {
  it('listens on 127.0.0.1, serves an SDK client, and on SIGTERM stops every backend', async () => {
    const child = spawn(process.execPath, [cliPath, 'serve', '--http', '--port', '0', '--config', fixtureConfig('gateway-two.json')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    expect(await waitFor(() => /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(stderr), 15000, 20)).toBe(true);
    const url = /listening on (\S+)/.exec(stderr)![1];
    const { client } = await connect(url, 'legacy');
    const result = await client.callTool({ name: 'mcp__two__echo', arguments: { text: 'over http' } });
    expect(textOf(result as { content: unknown[] })).toBe('over http');
    const backends = fixtureChildren(child.pid!);
    expect(backends).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await waitFor(() => backends.every((p) => !isAlive(p)), 5000, 20)).toBe(true);
  });
});

/** Live fixture server processes whose parent is `pid`. */
function fixtureChildren(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('test/fixtures/')) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
