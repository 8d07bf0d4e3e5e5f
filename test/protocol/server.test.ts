import { afterEach, describe, expect, it } from '@jest/globals';
import { McpClient } from '../../src/protocol/client.js';
import { asInputRequired, McpServerSession, type McpServerOptions } from '../../src/protocol/server.js';
import { createMemoryChannelPair } from '../../src/transport/memory.js';
import { MemoryPeer } from '../support/memory-peer.js';

// The server half over an in-memory pair: our own client on one end (both eras), or a
// test-played peer for what a client of ours would never send.

const TOOL = { name: 'echo', inputSchema: { type: 'object' } };
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function serve(options: Partial<McpServerOptions> = {}): { server: McpServerSession; near: ReturnType<typeof createMemoryChannelPair>[0] } {
  const [near, far] = createMemoryChannelPair();
  const server = new McpServerSession(far, {
    serverInfo: { name: 'mem-server', version: '1.2.3' },
    capabilities: () => ({ tools: { listChanged: true } }),
    instructions: () => 'use echo',
    cacheTtlMs: new Map([['tools/list', 5000]]),
    listenable: () => ({ toolsListChanged: true }),
    ...options,
  });
  server.handle('tools/list', () => ({ tools: [TOOL] }));
  open.push(server);
  return { server, near };
}

async function connect(near: Parameters<typeof McpClient.over>[0], protocolVersion: 'auto' | '2026-07-28' | '2025-06-18'): Promise<McpClient> {
  const client = await McpClient.over(near, { name: 'mem', protocolVersion, timeout: 5000 });
  open.push(client);
  return client;
}

/** Resolves once `check` holds; fails after `ms`. */
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('McpServerSession (protocol/server.ts)', () => {
  it('answers a legacy initialize in the client\'s revision with its identity, capabilities and instructions', async () => {
    const { server, near } = serve();
    const client = await connect(near, '2025-06-18');
    expect(client.era).toBe('legacy');
    expect(client.protocolVersion).toBe('2025-06-18');
    expect(client.serverInfo).toEqual({ name: 'mem-server', version: '1.2.3' });
    expect(client.instructions).toBe('use echo');
    expect(await client.listTools()).toEqual([TOOL]);
    expect(server.clientCapabilities).toEqual({});
  });

  it('answers server/discover and wraps 2026 results in their envelope with the cache hints', async () => {
    const { near } = serve();
    const client = await connect(near, '2026-07-28');
    expect(client.era).toBe('2026');
    expect(client.serverInfo).toEqual({ name: 'mem-server', version: '1.2.3' });
    expect(client.instructions).toBe('use echo');
    expect(await client.listTools()).toEqual([TOOL]);
    expect(client.lastCacheHints['tools/list']).toEqual({ ttlMs: 5000, cacheScope: 'private' });
  });

  it('tells of a list change in each era: legacy once initialized, 2026 on the listen that was granted it', async () => {
    for (const version of ['2025-06-18', '2026-07-28'] as const) {
      const { server, near } = serve();
      const client = await connect(near, version);
      let changes = 0;
      client.on('toolsChanged', () => changes++);
      // A 2026 client opens its listen after the start: tell again until it is in place.
      await until(() => {
        server.listChanged('toolsListChanged');
        return changes > 0;
      });
      expect(changes).toBeGreaterThan(0);
    }
  });

  it('refuses a revision it does not speak with -32022 naming the one it does, and sends a marked result as input_required', async () => {
    const [near, far] = createMemoryChannelPair();
    const server = new McpServerSession(far, { serverInfo: { name: 's', version: '1' }, capabilities: () => ({}) });
    open.push(server);
    server.handle('tools/call', () => asInputRequired({ inputRequests: { q: { method: 'roots/list' } }, requestState: 'abc' }));
    const peer = new MemoryPeer(near);
    peer.request(1, 'tools/call', { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
    const refused = await peer.next((m) => m.id === 1);
    expect(refused.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' } });
    peer.request(2, 'tools/call', { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
    const asked = await peer.next((m) => m.id === 2);
    expect(asked.result).toEqual({ inputRequests: { q: { method: 'roots/list' } }, requestState: 'abc', resultType: 'input_required', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 's', version: '1' } } });
  });

  it('keeps what a legacy client declared, and asks it on the stream of the request the question is about', async () => {
    const [near, far] = createMemoryChannelPair();
    const server = new McpServerSession(far, { serverInfo: { name: 's', version: '1' }, capabilities: () => ({}) });
    open.push(server);
    const peer = new MemoryPeer(near);
    peer.request(1, 'initialize', { protocolVersion: '1999-01-01', capabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } });
    const answer = await peer.next((m) => m.id === 1);
    expect(answer.result.protocolVersion).toBe('2025-11-25');
    expect(server.clientCapabilities).toEqual({ elicitation: {} });
    peer.handlers.set('elicitation/create', () => ({ action: 'decline' }));
    await expect(server.ask('elicitation/create', { message: 'ok?' }, { timeout: 5000, about: 7 })).resolves.toEqual({ action: 'decline' });
    const question = peer.received.find((r) => r.message.method === 'elicitation/create')!;
    expect(question.context.relatedTo).toBe(7);
  });
});
