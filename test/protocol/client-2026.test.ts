import { McpError } from '../../src/errors.js';
import { DISCOVER_PROBE_MS, McpClient, type ConnectOptions } from '../../src/protocol/client.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  MAX_INPUT_ROUNDS,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  UNSUPPORTED_PROTOCOL_VERSION,
} from '../../src/protocol/eras/modern.js';
import { LATEST_PROTOCOL_VERSION } from '../../src/protocol/types.js';
import type { MemoryChannel } from '../../src/transport/memory.js';
import { memoryPair, type MemoryPeer, NO_ANSWER } from '../support/memory-peer.js';
import { waitFor } from '../support/fixtures.js';

const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const rejection = (promise: Promise<unknown>): Promise<McpError> =>
  promise.then(
    () => {
      throw new Error('resolved');
    },
    (e: McpError) => e,
  );

const DISCOVERED = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
  _meta: { [SERVER_INFO_META_KEY]: { name: 'modern', version: '9.0.0' } },
  instructions: 'be modern',
};

/** A peer that plays a 2026-only server: discover, and `complete` answers to the list methods. */
function modernPeer(peer: MemoryPeer): MemoryPeer {
  peer.handlers.set('server/discover', () => DISCOVERED);
  peer.handlers.set('initialize', () => {
    throw Object.assign(new Error('Unsupported protocol version: 2025-11-25'), { code: UNSUPPORTED_PROTOCOL_VERSION, data: { supported: ['2026-07-28'] } });
  });
  peer.handlers.set('tools/list', () => ({ resultType: 'complete', tools: [{ name: 'echo', inputSchema: { type: 'object' } }], ttlMs: 60000, cacheScope: 'public' }));
  peer.handlers.set('tools/call', (params) => ({ resultType: 'complete', content: [{ type: 'text', text: `called ${params.name}` }] }));
  peer.handlers.set('prompts/list', () => ({ resultType: 'complete', prompts: [{ name: 'p' }] }));
  peer.handlers.set('prompts/get', () => ({ resultType: 'complete', messages: [] }));
  peer.handlers.set('resources/list', () => ({ resultType: 'complete', resources: [] }));
  peer.handlers.set('resources/templates/list', () => ({ resultType: 'complete', resourceTemplates: [] }));
  peer.handlers.set('resources/read', (params) => ({ resultType: 'complete', contents: [{ uri: params.uri, text: 'x' }] }));
  peer.handlers.set('completion/complete', () => ({ resultType: 'complete', completion: { values: ['a'] } }));
  // Like the SDK: acknowledge at once with what was asked, and keep the request open.
  peer.handlers.set('subscriptions/listen', (params, message) => {
    peer.notify('notifications/subscriptions/acknowledged', { notifications: params.notifications, _meta: { [SUBSCRIPTION_ID_META_KEY]: message.id } });
    return NO_ANSWER;
  });
  return peer;
}

/** A peer that plays a legacy server; `discover` says what it does with server/discover. */
function legacyPeer(peer: MemoryPeer, discover: 'method-not-found' | 'ignore' | 'invalid-params' = 'method-not-found'): MemoryPeer {
  peer.handlers.set('server/discover', () => {
    if (discover === 'ignore') return NO_ANSWER;
    throw Object.assign(new Error(discover === 'method-not-found' ? 'Method not found' : 'Server not initialized'), { code: discover === 'method-not-found' ? -32601 : -32602 });
  });
  peer.handlers.set('initialize', (params) => ({
    protocolVersion: params.protocolVersion,
    capabilities: { tools: {} },
    serverInfo: { name: 'legacy', version: '1.0.0' },
  }));
  peer.handlers.set('tools/list', () => ({ tools: [{ name: 'old', inputSchema: { type: 'object' } }] }));
  peer.handlers.set('tools/call', () => ({ content: [{ type: 'text', text: 'legacy answer' }] }));
  peer.handlers.set('ping', () => ({}));
  return peer;
}

/** Makes a memory channel look like stdio to the negotiation (which probes differently there). */
function asStdio(near: MemoryChannel): MemoryChannel {
  (near as { info: unknown }).info = { transport: 'stdio', stderrTail: () => [] };
  return near;
}

async function over(near: MemoryChannel, options: ConnectOptions = {}): Promise<McpClient> {
  const client = await McpClient.over(near, { name: 'mem', ...options });
  clients.push(client);
  return client;
}

/** The methods the peer received, but the 2026 listen (which its own tests cover). */
function methods(peer: MemoryPeer): string[] {
  return peer.received.map((r) => r.message.method).filter((m): m is string => typeof m === 'string' && m !== 'subscriptions/listen');
}

describe('era negotiation', () => {
  it('off stdio, tries server/discover first and speaks 2026-07-28 to a server that answers it', async () => {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    const client = await over(near);
    expect(client.era).toBe('2026');
    expect(client.protocolVersion).toBe('2026-07-28');
    expect(client.serverInfo).toEqual({ name: 'modern', version: '9.0.0' });
    expect(client.capabilities).toEqual({ tools: { listChanged: true }, resources: { subscribe: true } });
    expect(client.instructions).toBe('be modern');
    expect(client.transport).toBe('memory');
    expect(Number.isNaN(client.pid)).toBe(true);
    expect(methods(peer)).toEqual(['server/discover']);
  });

  it('falls back to initialize when server/discover is answered -32601', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    const client = await over(near);
    expect(client.era).toBe('legacy');
    expect(client.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(client.serverInfo.name).toBe('legacy');
    expect(methods(peer)).toEqual(['server/discover', 'initialize', 'notifications/initialized']);
  });

  it('falls back to initialize on any other JSON-RPC error to the probe', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer, 'invalid-params');
    expect((await over(near)).era).toBe('legacy');
  });

  it('bounds an ignored probe at half the timeout, then initializes without cancelling the probe', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer, 'ignore');
    const started = performance.now();
    const client = await over(near, { timeout: 1000 });
    const took = performance.now() - started;
    expect(client.era).toBe('legacy');
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(1000);
    expect(DISCOVER_PROBE_MS).toBeLessThanOrEqual(10_000);
    expect(methods(peer)).toEqual(['server/discover', 'initialize', 'notifications/initialized']);
  });

  it('falls back to initialize when the probe is refused with -32022 naming a legacy revision it speaks', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    peer.handlers.set('server/discover', () => {
      throw Object.assign(new Error('Unsupported protocol version'), { code: UNSUPPORTED_PROTOCOL_VERSION, data: { supported: ['2025-06-18'], requested: '2026-07-28' } });
    });
    const client = await over(near);
    expect(client.era).toBe('legacy');
  });

  it('falls back to initialize when the probe gets a success answer that is no discover result', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    peer.handlers.set('server/discover', () => ({}));
    expect((await over(near)).era).toBe('legacy');
  });

  it('fails with protocol-error naming the versions when the server speaks none of ours (-32022)', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('server/discover', () => {
      throw Object.assign(new Error('Unsupported protocol version'), { code: UNSUPPORTED_PROTOCOL_VERSION, data: { supported: ['2027-03-01'], requested: '2026-07-28' } });
    });
    const error = await rejection(McpClient.over(near, { name: 'mem' }));
    expect(error).toMatchObject({ code: 'protocol-error', phase: 'discover' });
    expect(error.message).toBe('server "mem": the server speaks protocol versions 2027-03-01; lazy-mcp speaks 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05');
    expect(near.isOpen).toBe(false);
    expect(methods(peer)).toEqual(['server/discover']);
  });

  it('retries server/discover once when a -32022 refusal names 2026-07-28 as supported (SEP-2575)', async () => {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    let refusals = 0;
    peer.handlers.set('server/discover', (params) => {
      expect((params._meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY]).toBe('2026-07-28');
      if (refusals++ === 0) {
        throw Object.assign(new Error('Unsupported protocol version'), { code: UNSUPPORTED_PROTOCOL_VERSION, data: { supported: ['2026-07-28'], requested: '' } });
      }
      return DISCOVERED;
    });
    const client = await over(near);
    expect(client.era).toBe('2026');
    expect(client.protocolVersion).toBe('2026-07-28');
    expect(methods(peer)).toEqual(['server/discover', 'server/discover']);
  });

  it('does not retry a second time: a server that keeps refusing the revision it names is a protocol-error', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('server/discover', () => {
      throw Object.assign(new Error('Unsupported protocol version'), { code: UNSUPPORTED_PROTOCOL_VERSION, data: { supported: ['2026-07-28'] } });
    });
    const error = await rejection(McpClient.over(near, { name: 'mem' }));
    expect(error).toMatchObject({ code: 'protocol-error', phase: 'discover' });
    expect(methods(peer)).toEqual(['server/discover', 'server/discover']);
  });

  it('fails with protocol-error when discover answers without 2026-07-28 in supportedVersions', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('server/discover', () => ({ ...DISCOVERED, supportedVersions: ['2027-03-01'] }));
    await expect(McpClient.over(near, { name: 'mem' })).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('speaks protocol versions 2027-03-01') });
  });

  it('on stdio, sends initialize first and moves to server/discover when a 2026-only server refuses it', async () => {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    const client = await over(asStdio(near));
    expect(client.era).toBe('2026');
    expect(methods(peer)).toEqual(['initialize', 'server/discover']);
  });

  it('on stdio, never probes a legacy server that accepts initialize', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    expect((await over(asStdio(near))).era).toBe('legacy');
    expect(methods(peer)).toEqual(['initialize', 'notifications/initialized']);
  });

  it('on stdio, reports the initialize refusal when server/discover is unknown too', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('initialize', () => {
      throw Object.assign(new Error('Bad request'), { code: -32600 });
    });
    peer.handlers.set('server/discover', () => {
      throw Object.assign(new Error('Method not found'), { code: -32601 });
    });
    const error = await rejection(McpClient.over(asStdio(near), { name: 'mem' }));
    expect(error).toMatchObject({ code: 'rpc-error', phase: 'initialize', rpc: { code: -32600 } });
  });

  it('with the era hint 2026 (a cached era) goes to server/discover directly, even on stdio', async () => {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    expect((await over(asStdio(near), { era: '2026' })).era).toBe('2026');
    expect(methods(peer)).toEqual(['server/discover']);
  });

  it('with the era hint legacy off stdio initializes without a probe', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    expect((await over(near, { era: 'legacy' })).era).toBe('legacy');
    expect(methods(peer)).toEqual(['initialize', 'notifications/initialized']);
  });

  it('a stale era hint 2026 still finds a legacy server', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    expect((await over(asStdio(near), { era: '2026' })).era).toBe('legacy');
  });

  it('insists on the one revision protocolVersion names', async () => {
    const a = memoryPair();
    legacyPeer(a.peer);
    expect((await over(a.near, { protocolVersion: '2025-06-18' })).protocolVersion).toBe('2025-06-18');
    expect(methods(a.peer)).toEqual(['initialize', 'notifications/initialized']);

    const b = memoryPair();
    legacyPeer(b.peer);
    b.peer.handlers.set('initialize', () => ({ protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'x', version: '1' } }));
    await expect(McpClient.over(b.near, { name: 'mem', protocolVersion: '2025-06-18' })).rejects.toMatchObject({
      code: 'protocol-error',
      message: 'server "mem": the server answered protocol version "2025-11-25" to our 2025-06-18; lazy-mcp speaks 2025-06-18',
    });

    const c = memoryPair();
    modernPeer(c.peer);
    expect((await over(c.near, { protocolVersion: '2026-07-28' })).era).toBe('2026');
  });

  it('refuses an unknown protocolVersion option naming it', async () => {
    const { near } = memoryPair();
    await expect(McpClient.over(near, { name: 'mem', protocolVersion: '2099-01-01' as never })).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringContaining('the option `protocolVersion` must be "auto" or one of 2026-07-28, 2025-11-25'),
    });
  });

  it('a negotiation that never ends times out with the handshake timeout and closes the channel', async () => {
    const { near, peer } = memoryPair();
    peer.handlers.set('server/discover', () => NO_ANSWER);
    peer.handlers.set('initialize', () => NO_ANSWER);
    const error = await rejection(McpClient.over(near, { name: 'mem', timeout: 300 }));
    expect(error).toMatchObject({ code: 'timeout', phase: 'initialize' });
    expect(near.isOpen).toBe(false);
  });
});

describe('2026 requests', () => {
  async function modern(options: ConnectOptions = {}) {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    const client = await over(near, { clientInfo: { name: 'host', version: '3.1' }, ...options });
    return { client, peer };
  }

  it('carries the protocol version, client info and client capabilities in _meta of every request', async () => {
    const { client, peer } = await modern({ roots: [{ uri: 'file:///w' }], capabilities: { elicitation: true } });
    await client.listTools();
    await client.callTool('echo', { text: 'x' });
    await client.listPrompts();
    await client.getPrompt('p');
    await client.listResources();
    await client.listResourceTemplates();
    await client.readResource('mem://a');
    await client.complete({ type: 'ref/prompt', name: 'p' }, { name: 'a', value: '' });
    await client.ping();
    const requests = peer.received.map((r) => r.message).filter((m) => m.id !== undefined && m.method && m.method !== 'subscriptions/listen');
    expect(requests.map((m) => m.method)).toEqual([
      'server/discover',
      'tools/list',
      'tools/call',
      'prompts/list',
      'prompts/get',
      'resources/list',
      'resources/templates/list',
      'resources/read',
      'completion/complete',
      'server/discover',
    ]);
    for (const m of requests) {
      expect(m.params._meta).toMatchObject({
        [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
        [CLIENT_INFO_META_KEY]: { name: 'host', version: '3.1' },
        [CLIENT_CAPABILITIES_META_KEY]: { roots: { listChanged: false }, elicitation: { form: {}, url: {} } },
      });
    }
    // A tool call has its progress token alongside the envelope.
    expect(requests[2].params._meta.progressToken).toBe(requests[2].id);
    expect(requests[2].params).toMatchObject({ name: 'echo', arguments: { text: 'x' } });
  });

  it('declares no capability it has no handler for', async () => {
    const { peer } = await modern();
    expect(peer.sent('server/discover')[0].params._meta[CLIENT_CAPABILITIES_META_KEY]).toEqual({});
  });

  it('strips resultType and keeps the cache hints of a listing', async () => {
    const { client } = await modern();
    const tools = await client.listTools();
    expect(tools).toEqual([{ name: 'echo', inputSchema: { type: 'object' } }]);
    expect(client.lastCacheHints['tools/list']).toEqual({ ttlMs: 60000, cacheScope: 'public' });
    expect(client.lastCacheHints['prompts/list']).toBeUndefined();
  });

  it('reads absent or unusable hints as immediately stale and private', async () => {
    const { client, peer } = await modern();
    await client.listPrompts();
    expect(client.lastCacheHints['prompts/list']).toEqual({ ttlMs: 0, cacheScope: 'private' });
    peer.handlers.set('prompts/list', () => ({ resultType: 'complete', prompts: [], ttlMs: -5, cacheScope: 'everyone' }));
    await client.listPrompts();
    expect(client.lastCacheHints['prompts/list']).toEqual({ ttlMs: 0, cacheScope: 'private' });
  });

  it('gives a listing over pages the shortest lifetime of its pages, private if one page is', async () => {
    const { client, peer } = await modern();
    peer.handlers.set('tools/list', (params) =>
      params.cursor === undefined
        ? { resultType: 'complete', tools: [{ name: 'a', inputSchema: { type: 'object' } }], nextCursor: 'p2', ttlMs: 60000, cacheScope: 'public' }
        : { resultType: 'complete', tools: [{ name: 'b', inputSchema: { type: 'object' } }], ttlMs: 5000, cacheScope: 'private' },
    );
    expect((await client.listTools()).map((t) => t.name)).toEqual(['a', 'b']);
    expect(client.lastCacheHints['tools/list']).toEqual({ ttlMs: 5000, cacheScope: 'private' });
    // A new listing starts from its own first page.
    peer.handlers.set('tools/list', () => ({ resultType: 'complete', tools: [], ttlMs: 90000, cacheScope: 'public' }));
    await client.listTools();
    expect(client.lastCacheHints['tools/list']).toEqual({ ttlMs: 90000, cacheScope: 'public' });
  });

  it('is a protocol-error when a result has no resultType, an unknown one, or input_required where none is allowed', async () => {
    const { client, peer } = await modern();
    peer.handlers.set('tools/list', () => ({ tools: [] }));
    await expect(client.listTools()).rejects.toMatchObject({
      code: 'protocol-error',
      phase: 'tools/list',
      message: 'server "mem": invalid tools/list result: resultType: servers of revision 2026-07-28 must send a resultType',
    });
    peer.handlers.set('tools/list', () => ({ resultType: 'partial', tools: [] }));
    await expect(client.listTools()).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('resultType: unsupported value "partial"') });
    peer.handlers.set('tools/list', () => ({ resultType: 'input_required', inputRequests: {} }));
    await expect(client.listTools()).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('not allowed on tools/list') });
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required' }));
    await expect(client.callTool('x')).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('neither inputRequests nor requestState') });
  });

  it('validates the complete result against the method schema', async () => {
    const { client, peer } = await modern();
    peer.handlers.set('resources/read', () => ({ resultType: 'complete', contents: 'nope' }));
    await expect(client.readResource('a://b')).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('invalid resources/read result: contents') });
  });

  it('setLogLevel is a no-op in 2026 (the revision has no logging/setLevel)', async () => {
    const { client, peer } = await modern();
    await client.setLogLevel('debug');
    expect(methods(peer)).toEqual(['server/discover']);
  });
});

describe('multi round-trip requests', () => {
  const STATE = ' opaque ✓ "state" \n with\ttabs and \u0000 nul ';

  async function mrtr(options: ConnectOptions = {}) {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    const client = await over(near, options);
    return { client, peer };
  }

  it('answers input_required with the handlers, and re-sends on a fresh id with inputResponses and the byte-exact requestState', async () => {
    const asked: unknown[] = [];
    const { client, peer } = await mrtr({
      handlers: {
        elicitation: async (request, ctx) => {
          asked.push({ message: request.message, server: ctx.server, toolCall: ctx.toolCall });
          return { action: 'accept', content: { sure: true } };
        },
        roots: async () => [{ uri: 'file:///r' }],
      },
    });
    peer.handlers.set('tools/call', (params) => {
      if (!params.inputResponses) {
        return {
          resultType: 'input_required',
          inputRequests: {
            ok: { method: 'elicitation/create', params: { message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } },
            where: { method: 'roots/list' },
          },
          requestState: STATE,
        };
      }
      return { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
    });
    const result = await client.callTool('deploy', { env: 'prod' });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    const calls = peer.sent('tools/call');
    expect(calls).toHaveLength(2);
    expect(calls[1].id).not.toBe(calls[0].id);
    expect(calls[1].params).toMatchObject({
      name: 'deploy',
      arguments: { env: 'prod' },
      inputResponses: { ok: { action: 'accept', content: { sure: true } }, where: { roots: [{ uri: 'file:///r' }] } },
    });
    expect(calls[1].params.requestState).toBe(STATE);
    expect(calls[1].params._meta[PROTOCOL_VERSION_META_KEY]).toBe('2026-07-28');
    expect(calls[0].params.inputResponses).toBeUndefined();
    expect(asked).toEqual([{ message: 'Sure?', server: 'mem', toolCall: { name: 'deploy', arguments: { env: 'prod' } } }]);
  });

  it("runs the call's finish (the manager's) once, on the outcome of its last round", async () => {
    const { client, peer } = await mrtr({ handlers: { elicitation: async () => ({ action: 'accept', content: {} }) } });
    let asks = 1;
    peer.handlers.set('tools/call', (params) => {
      if (params.name === 'broken') return { content: [] };
      if (!params.inputResponses || asks-- > 0) return { resultType: 'input_required', inputRequests: { ok: { method: 'elicitation/create', params: { message: 'Sure?', requestedSchema: { type: 'object', properties: {} } } } } };
      return { resultType: 'complete', content: [{ type: 'text', text: 'done' }] };
    });
    const seen: string[] = [];
    const finish = {
      done: (result: unknown) => {
        seen.push(`done ${JSON.stringify((result as { content: unknown }).content)}`);
        return 'finished';
      },
      failed: (error: unknown) => {
        seen.push(`failed ${(error as McpError).code}`);
        return 'failure handled';
      },
    };
    expect(await client.callTool('deploy', {}, { finish })).toBe('finished');
    expect(peer.sent('tools/call')).toHaveLength(3);
    expect(await client.callTool('broken', {}, { finish })).toBe('failure handled');
    expect(seen).toEqual(['done [{"type":"text","text":"done"}]', 'failed protocol-error']);
    // A finish that throws fails the call with what it threw, and is not asked again.
    const refusing = {
      done: () => {
        throw new Error('refused by the finish');
      },
      failed: finish.failed,
    };
    asks = 0;
    await expect(client.callTool('deploy', {}, { finish: refusing })).rejects.toThrow('refused by the finish');
    expect(seen).toHaveLength(2);
  });

  it("uses the call's own handlers over the client's", async () => {
    const { client, peer } = await mrtr({ handlers: { elicitation: async () => ({ action: 'decline' }) } });
    peer.handlers.set('prompts/get', (params) =>
      params.inputResponses
        ? { resultType: 'complete', messages: [{ role: 'user', content: { type: 'text', text: JSON.stringify(params.inputResponses) } }] }
        : { resultType: 'input_required', inputRequests: { q: { method: 'elicitation/create', params: { message: '?' } } } },
    );
    const result = await client.getPrompt('p', {}, { handlers: { elicitation: async () => ({ action: 'cancel' }) } });
    expect(JSON.stringify(result.messages)).toContain('{\\"q\\":{\\"action\\":\\"cancel\\"}}');
    expect(peer.sent('prompts/get')[1].params.requestState).toBeUndefined();
  });

  it(`gives up with protocol-error after ${MAX_INPUT_ROUNDS} rounds of input_required`, async () => {
    const { client, peer } = await mrtr({ handlers: { elicitation: async () => ({ action: 'accept', content: {} }) } });
    peer.handlers.set('resources/read', () => ({ resultType: 'input_required', inputRequests: { again: { method: 'elicitation/create', params: { message: 'more' } } }, requestState: 's' }));
    const error = await rejection(client.readResource('loop://x'));
    expect(error).toMatchObject({ code: 'protocol-error', phase: 'resources/read' });
    expect(error.message).toBe(`server "mem": resources/read "loop://x" asked for input ${MAX_INPUT_ROUNDS} times in a row (input_required); the server's multi round-trip request does not end`);
    expect(peer.sent('resources/read')).toHaveLength(MAX_INPUT_ROUNDS);
  });

  it('is a clear protocol-error when the server asks for input the client has no handler for (and did not declare)', async () => {
    const { client, peer } = await mrtr();
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required', inputRequests: { s: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } } } }));
    await expect(client.callTool('t')).rejects.toMatchObject({
      code: 'protocol-error',
      phase: 'tools/call',
      message: 'server "mem": tools/call "t" asked for sampling/createMessage (input_required), but this client has no sampling handler and did not declare the capability',
    });
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required', inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } } } }));
    await expect(client.callTool('t')).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('no elicitation handler') });
    expect(peer.sent('tools/call')).toHaveLength(2);
  });

  it('declines an elicitation the client declared but whose call brings no handler', async () => {
    const { client, peer } = await mrtr({ capabilities: { elicitation: true } });
    peer.handlers.set('tools/call', (params) =>
      params.inputResponses
        ? { resultType: 'complete', content: [{ type: 'text', text: JSON.stringify(params.inputResponses) }] }
        : { resultType: 'input_required', inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } } } },
    );
    const result = await client.callTool('t');
    expect(result.content).toEqual([{ type: 'text', text: '{"e":{"action":"decline"}}' }]);
  });

  it('passes the call signal to the handlers and stops the rounds when it aborts', async () => {
    let handlerSignal: AbortSignal | undefined;
    const controller = new AbortController();
    const { client, peer } = await mrtr({
      handlers: {
        elicitation: (_request, ctx) => {
          handlerSignal = ctx.signal;
          setTimeout(() => controller.abort(new Error('stop')), 20);
          // A person who never answers: only the abort ends the wait.
          return new Promise(() => undefined);
        },
      },
    });
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required', inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } } } }));
    await expect(client.callTool('t', {}, { signal: controller.signal })).rejects.toMatchObject({ code: 'cancelled' });
    expect(handlerSignal?.aborted).toBe(true);
    expect(peer.sent('tools/call')).toHaveLength(1);
  });
  it('a failing handler fails the call with an McpError and stops its sibling handlers', async () => {
    let siblingSignal: AbortSignal | undefined;
    const { client, peer } = await mrtr({
      handlers: {
        // A person who never answers: only an abort ends the wait.
        elicitation: (_request, ctx) => ((siblingSignal = ctx.signal), new Promise(() => undefined)),
        sampling: async () => {
          await new Promise((r) => setTimeout(r, 10));
          throw new Error('the model is down');
        },
      },
    });
    peer.handlers.set('tools/call', () => ({
      resultType: 'input_required',
      inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } }, s: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } } },
    }));
    const error = await rejection(client.callTool('t'));
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'rpc-error', server: 'mem', phase: 'tools/call', rpc: { code: -32603, message: 'the model is down' } });
    expect(error.message).toBe('server "mem": tools/call "t" asked for sampling/createMessage (input_required), and the host\'s handler failed: the model is down');
    expect((error.cause as Error).message).toBe('the model is down');
    expect(siblingSignal?.aborted).toBe(true);
    expect(peer.sent('tools/call')).toHaveLength(1);
  });

  it('a handler that throws an McpError fails the call with it as it is', async () => {
    const own = new McpError('cancelled', 'the user closed the form', {});
    const { client, peer } = await mrtr({ handlers: { elicitation: async () => Promise.reject(own) } });
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required', inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } } } }));
    expect(await rejection(client.callTool('t'))).toBe(own);
  });

  it('stops waiting for the handlers when the session ends, rejecting with closed', async () => {
    let started!: () => void;
    const asked = new Promise<void>((resolve) => (started = resolve));
    const { client, peer } = await mrtr({ handlers: { elicitation: () => (started(), new Promise(() => undefined)) } });
    peer.handlers.set('tools/call', () => ({ resultType: 'input_required', inputRequests: { e: { method: 'elicitation/create', params: { message: 'hi' } } } }));
    const call = client.callTool('t');
    await asked;
    await client.close();
    await expect(call).rejects.toMatchObject({ code: 'closed', phase: 'tools/call' });
  });
});

describe('legacy requests over a channel', () => {
  it('answers a server request related to a call with that call’s handlers', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    const client = await over(near, { handlers: { elicitation: async () => ({ action: 'decline' }) } });
    peer.handlers.set('tools/call', () => NO_ANSWER);
    const call = client.callTool('ask', {}, { handlers: { elicitation: async () => ({ action: 'accept', content: { a: 1 } }) } });
    const sent = await peer.next('tools/call');
    peer.request('q1', 'elicitation/create', { message: 'related' }, { relatedTo: sent.id });
    peer.request('q2', 'elicitation/create', { message: 'unrelated' });
    expect((await peer.next((m) => m.id === 'q1')).result).toEqual({ action: 'accept', content: { a: 1 } });
    expect((await peer.next((m) => m.id === 'q2')).result).toEqual({ action: 'decline' });
    peer.reply(sent.id, { content: [] });
    await call;
  });

  it('a question about a call stops when the call is cancelled or times out (HostRequestContext.signal), and is still answered', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    const signals: AbortSignal[] = [];
    const client = await over(near, {
      handlers: {
        // A person who never answers: only the signal ends the wait.
        elicitation: (_request, ctx) =>
          new Promise((resolve) => {
            signals.push(ctx.signal);
            ctx.signal.addEventListener('abort', () => resolve({ action: 'cancel' }), { once: true });
          }),
      },
    });
    peer.handlers.set('tools/call', () => NO_ANSWER);
    // Related by the transport (it came on the call's own stream): the caller cancels the call.
    const controller = new AbortController();
    const call = client.callTool('ask', {}, { signal: controller.signal }).catch((e: McpError) => e);
    const first = await peer.next('tools/call');
    peer.request('q1', 'elicitation/create', { message: 'related' }, { relatedTo: first.id });
    expect(await waitFor(() => signals.length === 1)).toBe(true);
    expect(signals[0].aborted).toBe(false);
    controller.abort();
    expect(await call).toMatchObject({ code: 'cancelled' });
    expect(signals[0].aborted).toBe(true);
    expect((await peer.next((m) => m.id === 'q1')).result).toEqual({ action: 'cancel' });
    // Attributed to the one caller with calls in flight (no relation on stdio): the call times out.
    const timed = client.callTool('ask', {}, { timeout: 150, caller: {} }).catch((e: McpError) => e);
    const second = await peer.next((m) => m.method === 'tools/call' && m.id !== first.id);
    peer.request('q2', 'elicitation/create', { message: 'sole caller' });
    expect(await waitFor(() => signals.length === 2)).toBe(true);
    expect(await timed).toMatchObject({ code: 'timeout' });
    expect(signals[1].aborted).toBe(true);
    expect((await peer.next((m) => m.id === 'q2')).result).toEqual({ action: 'cancel' });
    expect(second.id).not.toBe(first.id);
  });

  it('a question the server cancels is stopped and never answered', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    let signal: AbortSignal | undefined;
    const client = await over(near, { handlers: { elicitation: (_request, ctx) => ((signal = ctx.signal), new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve({ action: 'cancel' })))) } });
    peer.request('q3', 'elicitation/create', { message: 'unrelated' });
    expect(await waitFor(() => signal !== undefined)).toBe(true);
    peer.notify('notifications/cancelled', { requestId: 'q3' });
    expect(await waitFor(() => signal!.aborted)).toBe(true);
    await client.listTools();
    expect(peer.received.some((r) => r.message.id === 'q3')).toBe(false);
  });

  it('legacy calls carry no 2026 envelope', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    const client = await over(near);
    await client.listTools();
    expect(peer.sent('tools/list')[0].params).toEqual({});
  });
});

describe('subscriptions/listen (2026)', () => {
  const listens = (peer: MemoryPeer) => peer.sent('subscriptions/listen');
  const note = (peer: MemoryPeer, method: string, subscription: unknown, params: Record<string, unknown> = {}) =>
    peer.notify(method, { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: subscription } });

  async function listening(capabilities: Record<string, unknown> = DISCOVERED.capabilities) {
    const { near, peer } = memoryPair();
    modernPeer(peer);
    peer.handlers.set('server/discover', () => ({ ...DISCOVERED, capabilities }));
    const client = await over(near);
    return { client, peer };
  }

  it('listens after discover for the list changes the server declares, and emits them as events', async () => {
    const { client, peer } = await listening({ tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } });
    const listen = await peer.next('subscriptions/listen');
    expect(listen.params.notifications).toEqual({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    expect(listen.params._meta[PROTOCOL_VERSION_META_KEY]).toBe('2026-07-28');
    expect(listen.params._meta.progressToken).toBeUndefined();
    const events: string[] = [];
    for (const event of ['toolsChanged', 'promptsChanged', 'resourcesChanged']) client.on(event, () => events.push(event));
    note(peer, 'notifications/tools/list_changed', listen.id);
    note(peer, 'notifications/prompts/list_changed', listen.id);
    note(peer, 'notifications/resources/list_changed', listen.id);
    await new Promise((r) => setTimeout(r, 10));
    expect(events).toEqual(['toolsChanged', 'promptsChanged', 'resourcesChanged']);
    // It stays open: no timeout ends it.
    expect(client.inFlight).toBe(1);
  });

  it('does not listen when the server declares no list changes', async () => {
    const { client, peer } = await listening({ tools: {} });
    await client.listTools();
    expect(listens(peer)).toEqual([]);
    expect(client.inFlight).toBe(0);
  });

  it('subscribes to a resource with a new listen, then cancels the old one; updates arrive as resourceUpdated', async () => {
    const { client, peer } = await listening();
    const first = await peer.next('subscriptions/listen');
    const updated: string[] = [];
    client.on('resourceUpdated', (uri: string) => updated.push(uri));
    await client.subscribeResource('memo://a');
    const [, second] = listens(peer);
    expect(second.params.notifications).toEqual({ toolsListChanged: true, resourceSubscriptions: ['memo://a'] });
    expect((await peer.next('notifications/cancelled')).params).toMatchObject({ requestId: first.id });
    // The old one was cancelled only after the new one was acknowledged.
    const order = peer.received.map((r) => r.message.method ?? 'answer');
    expect(order.indexOf('notifications/cancelled')).toBeGreaterThan(order.lastIndexOf('subscriptions/listen'));
    note(peer, 'notifications/resources/updated', second.id, { uri: 'memo://a' });
    await client.subscribeResource('memo://b');
    expect(listens(peer)[2].params.notifications.resourceSubscriptions).toEqual(['memo://a', 'memo://b']);
    await client.unsubscribeResource('memo://a');
    expect(listens(peer)[3].params.notifications.resourceSubscriptions).toEqual(['memo://b']);
    expect(updated).toEqual(['memo://a']);
    expect(client.inFlight).toBe(1);
  });

  it('refuses a subscription the server cannot grant, with rpc-error', async () => {
    const none = await listening({ tools: { listChanged: true } });
    await expect(none.client.subscribeResource('memo://a')).rejects.toMatchObject({
      code: 'rpc-error',
      phase: 'resources/subscribe',
      message: 'server "mem": subscriptions/listen for "memo://a" failed: resource subscriptions are not supported: the server does not declare resources.subscribe',
    });
    const stingy = await listening();
    stingy.peer.handlers.set('subscriptions/listen', (_params, message) => {
      stingy.peer.notify('notifications/subscriptions/acknowledged', { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID_META_KEY]: message.id } });
      return NO_ANSWER;
    });
    await expect(stingy.client.subscribeResource('memo://a')).rejects.toMatchObject({ code: 'rpc-error', message: expect.stringContaining('the server did not grant it') });
  });

  it('reports a refused listen, and a listen never acknowledged as a timeout', async () => {
    const refused = await listening();
    refused.peer.handlers.set('subscriptions/listen', () => {
      throw Object.assign(new Error('Method not found'), { code: -32601 });
    });
    await expect(refused.client.subscribeResource('memo://a')).rejects.toMatchObject({ code: 'rpc-error', phase: 'subscriptions/listen', rpc: { code: -32601 } });
    const silent = await listening();
    silent.peer.handlers.set('subscriptions/listen', () => NO_ANSWER);
    await expect(silent.client.subscribeResource('memo://a', { timeout: 100 })).rejects.toMatchObject({
      code: 'timeout',
      message: 'server "mem": subscriptions/listen was not acknowledged within 100 ms',
    });
  });

  it('legacy subscribeResource sends resources/subscribe and resources/unsubscribe', async () => {
    const { near, peer } = memoryPair();
    legacyPeer(peer);
    peer.handlers.set('resources/subscribe', () => ({}));
    peer.handlers.set('resources/unsubscribe', () => ({}));
    const client = await over(near);
    await client.subscribeResource('file:///a');
    await client.unsubscribeResource('file:///a');
    expect(peer.sent('resources/subscribe')[0].params).toEqual({ uri: 'file:///a' });
    expect(peer.sent('resources/unsubscribe')[0].params).toEqual({ uri: 'file:///a' });
    expect(listens(peer)).toEqual([]);
  });
});
