import { McpClient } from '../../src/protocol/client.js';
import type { HostHandlers } from '../../src/protocol/types.js';
import { memoryPair, type MemoryPeer, NO_ANSWER } from '../support/memory-peer.js';

// A legacy server's question that arrives on no call's stream: the client gives it to the
// one caller with requests in flight, and never guesses between callers.

const clients: McpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const named = (name: string, seen?: (string | undefined)[]): HostHandlers => ({
  elicitation: async (_request, ctx) => (seen?.push(ctx.toolCall?.name), { action: 'accept', content: { name } }),
});

/** A legacy server whose tool calls wait until the test answers them. */
async function legacy(handlers: HostHandlers, capabilities?: { elicitation?: boolean }): Promise<{ client: McpClient; peer: MemoryPeer }> {
  const { near, peer } = memoryPair();
  peer.handlers.set('server/discover', () => {
    throw Object.assign(new Error('Method not found'), { code: -32601 });
  });
  peer.handlers.set('initialize', (params) => ({ protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'legacy', version: '1' } }));
  peer.handlers.set('tools/call', () => NO_ANSWER);
  const client = await McpClient.over(near, { name: 'mem', handlers, capabilities });
  clients.push(client);
  return { client, peer };
}

let questions = 0;
/** Asks the client a question on no call's stream; what it answered. */
async function ask(peer: MemoryPeer): Promise<unknown> {
  const id = `q${++questions}`;
  peer.request(id, 'elicitation/create', { message: '?' });
  return (await peer.next((m) => m.id === id)).result?.content?.name;
}

describe('a question no request claims', () => {
  it('goes to the one caller with requests in flight, else to the client’s own handlers', async () => {
    const { client, peer } = await legacy(named('client'));
    const one = { handlers: named('one'), caller: {} };
    const two = { handlers: named('two'), caller: {} };
    expect(await ask(peer)).toBe('client');
    const first = client.callTool('a', {}, one);
    const firstSent = await peer.next((m) => m.method === 'tools/call' && m.params.name === 'a');
    expect(await ask(peer)).toBe('one');
    const second = client.callTool('b', {}, two);
    const secondSent = await peer.next((m) => m.method === 'tools/call' && m.params.name === 'b');
    expect(await ask(peer)).toBe('client');
    peer.reply(firstSent.id, { content: [] });
    await first;
    expect(await ask(peer)).toBe('two');
    peer.reply(secondSent.id, { content: [] });
    await second;
    expect(await ask(peer)).toBe('client');
  });

  it('names the tool call only when its caller has exactly that one request in flight', async () => {
    const seen: (string | undefined)[] = [];
    const { client, peer } = await legacy({}, { elicitation: true });
    const caller = { handlers: named('session', seen), caller: {} };
    const a = client.callTool('a', {}, { ...caller, toolCall: { name: 'mcp__s__a', arguments: {} } });
    const aSent = await peer.next((m) => m.method === 'tools/call' && m.params.name === 'a');
    await ask(peer);
    const b = client.callTool('b', {}, caller);
    const bSent = await peer.next((m) => m.method === 'tools/call' && m.params.name === 'b');
    await ask(peer);
    peer.reply(aSent.id, { content: [] });
    peer.reply(bSent.id, { content: [] });
    await Promise.all([a, b]);
    expect(seen).toEqual(['mcp__s__a', undefined]);
  });

  it('does not count requests that name no caller (the client’s own listings)', async () => {
    const { client, peer } = await legacy(named('client'));
    peer.handlers.set('tools/list', () => NO_ANSWER);
    const listing = client.listTools();
    const listSent = await peer.next('tools/list');
    const call = client.callTool('a', {}, { handlers: named('one'), caller: {} });
    const callSent = await peer.next('tools/call');
    expect(await ask(peer)).toBe('one');
    peer.reply(callSent.id, { content: [] });
    peer.reply(listSent.id, { tools: [] });
    await Promise.all([call, listing]);
  });

  it('a capability the client did not declare is not answered by a caller that handles it', async () => {
    const { client, peer } = await legacy({});
    const call = client.callTool('a', {}, { handlers: named('one'), caller: {} });
    const sent = await peer.next('tools/call');
    peer.request('undeclared', 'elicitation/create', { message: '?' });
    expect((await peer.next((m) => m.id === 'undeclared')).result).toEqual({ action: 'decline' });
    peer.reply(sent.id, { content: [] });
    await call;
  });
});
