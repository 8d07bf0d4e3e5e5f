import { Client } from '@modelcontextprotocol/client';
import { Gateway, type GatewayOptions } from '../../src/gateway/gateway-server.js';
import { McpServerManager, type ManagerOptions } from '../../src/manager/manager.js';
import { McpClient } from '../../src/protocol/client.js';
import type { HostHandlers } from '../../src/protocol/types.js';
import { createMemoryChannelPair } from '../../src/transport/memory.js';
import { fixture, textOf } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';
import { ChannelTransport } from './channel-transport.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Era = 'legacy' | '2026';

/** A manager over real fixture servers, a gateway on it, and an SDK v2 client talking to it in memory. */
async function setUp(servers: Record<string, object>, era: Era, options: GatewayOptions = {}, managerOptions: ManagerOptions = {}) {
  const manager = McpServerManager.fromConfig({ mcpServers: servers }, managerOptions);
  cleanups.push(() => manager.shutdown());
  const starts: string[] = [];
  manager.on('stateChange', ({ server, to }) => to === 'starting' && starts.push(server));
  const gateway = new Gateway(manager, options);
  cleanups.push(() => gateway.close());
  const [clientSide, serverSide] = createMemoryChannelPair();
  gateway.connect(serverSide);
  const client = new Client(
    { name: 'test', version: '1.0.0' },
    era === '2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new ChannelTransport(clientSide));
  cleanups.push(() => client.close());
  return { manager, gateway, client, starts };
}

/** Polls an async check until it holds, at most `ms`. */
/** A gateway over a pool with no server, spoken to over a memory channel; its answers, in arrival order. */
function emptyGateway<T = unknown>() {
  const manager = McpServerManager.fromConfig({ mcpServers: {} });
  cleanups.push(() => manager.shutdown());
  const gateway = new Gateway(manager);
  cleanups.push(() => gateway.close());
  const [clientSide, serverSide] = createMemoryChannelPair();
  gateway.connect(serverSide);
  const answers: T[] = [];
  clientSide.onMessage((m) => answers.push(m as T));
  return { clientSide, answers };
}

async function waitForAsync(check: () => Promise<boolean>, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a backend\'s questions through the gateway', () => {
  it('reach the legacy client whose call caused them; a client that declared nothing declines', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { hf: fixture('host-features.mjs') } }, { capabilities: { elicitation: true } });
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager);
    cleanups.push(() => gateway.close());
    const connect = async (handlers: HostHandlers) => {
      const [clientSide, serverSide] = createMemoryChannelPair();
      gateway.connect(serverSide);
      const client = await McpClient.over(clientSide, { protocolVersion: '2025-11-25', handlers });
      cleanups.push(() => client.close());
      return client;
    };
    const asked: string[] = [];
    const ada = await connect({ elicitation: async (request) => (asked.push(`ada: ${request.message}`), { action: 'accept', content: { name: 'Ada' } }) });
    const bob = await connect({ elicitation: async (request) => (asked.push(`bob: ${request.message}`), { action: 'accept', content: { name: 'Bob' } }) });
    // One at a time: a legacy stdio backend's question names no call, so it is routed to the one caller in flight.
    const a = await ada.callTool('mcp__hf__ask', { message: 'for ada' });
    const b = await bob.callTool('mcp__hf__ask', { message: 'for bob' });
    expect(textOf(a)).toContain('Ada');
    expect(textOf(b)).toContain('Bob');
    expect(asked.sort()).toEqual(['ada: for ada', 'bob: for bob']);
    const silent = await connect({});
    expect(textOf(await silent.callTool('mcp__hf__ask', {}))).toContain('decline');
  });
});

describe("a backend's questions to a 2026 client: the gateway's own input_required rounds", () => {
  /** A gateway over a legacy asking backend and a 2026 one, and an SDK v2 client pinned to 2026 with elicitation and sampling handlers. */
  async function asking(gatewayOptions: GatewayOptions = {}) {
    const manager = McpServerManager.fromConfig(
      { mcpServers: { a: fixture('echo-server.mjs'), hf: fixture('host-features.mjs'), modern: fixture('modern-asks.mjs'), sdk: fixture('sdk2-modern-server.mjs') } },
      { capabilities: { elicitation: true, sampling: true } },
    );
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager, gatewayOptions);
    cleanups.push(() => gateway.close());
    const [clientSide, serverSide] = createMemoryChannelPair();
    gateway.connect(serverSide);
    const wire: Record<string, unknown>[] = [];
    clientSide.onMessage((m) => void wire.push(m as unknown as Record<string, unknown>));
    const asked: string[] = [];
    const client = new Client(
      { name: 'mrtr', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} }, sampling: {} } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { name: 'Ada', sure: true } };
    });
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test-model' }));
    await client.connect(new ChannelTransport(clientSide));
    cleanups.push(() => client.close());
    return { manager, gateway, client, asked, wire, clientSide };
  }

  it('a legacy backend elicits during a call: the client gets input_required, answers, and the same backend call finishes', async () => {
    const { gateway, client, asked, wire } = await asking();
    const result = await client.callTool({ name: 'mcp__hf__ask', arguments: { message: 'Who are you?' } });
    expect(asked).toEqual(['Who are you?']);
    expect(JSON.parse(textOf(result as { content: unknown[] }))).toMatchObject({ result: { action: 'accept', content: { name: 'Ada' } } });
    const rounds = wire.filter((m) => (m.result as { resultType?: string } | undefined)?.resultType === 'input_required');
    expect(rounds).toHaveLength(1);
    expect(rounds[0].result).toMatchObject({ inputRequests: { q1: { method: 'elicitation/create', params: { message: 'Who are you?' } } }, requestState: expect.stringMatching(/^[\w-]{32}$/) });
    expect(gateway.rounds.size).toBe(0);
    const sampled = await client.callTool({ name: 'mcp__hf__sample', arguments: { q: 'hi' } });
    expect(JSON.parse(textOf(sampled as { content: unknown[] }))).toMatchObject({ result: { content: { text: 'sampled' } } });
  });

  it("a 2026 backend's own input_required becomes the gateway's round, with the backend's requestState kept between them", async () => {
    const { client, asked } = await asking();
    const modern = await client.callTool({ name: 'mcp__modern__ask', arguments: { who: 'x' } });
    expect(asked).toEqual(['Who is x?']);
    expect(JSON.parse(textOf(modern as { content: unknown[] }))).toEqual({ answer: { action: 'accept', content: { name: 'Ada', sure: true } }, state: 'state-for-x\u00e9' });
    const sdk = await client.callTool({ name: 'mcp__sdk__confirm', arguments: { what: 'delete' } });
    expect(asked).toEqual(['Who is x?', 'Really delete?']);
    expect(textOf(sdk as { content: unknown[] })).toContain('accept');
  });

  it('an unknown, replayed or expired requestState is a clear invalid-params error; an expired round cancels its backend call', async () => {
    const { gateway, clientSide } = await asking({ inputTimeoutMs: 1500 });
    const answers = new Map<number, Record<string, unknown>>();
    clientSide.onMessage((m) => {
      const message = m as unknown as { id?: number };
      if (typeof message.id === 'number') answers.set(message.id, message as Record<string, unknown>);
    });
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const call = async (id: number, params: Record<string, unknown>, name = 'mcp__hf__ask') => {
      await clientSide.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: meta, ...params } });
      await waitForAsync(async () => answers.has(id));
      return answers.get(id)!;
    };
    const unknown = await call(101, { requestState: 'made-up', inputResponses: {} });
    expect(unknown).toMatchObject({ error: { code: -32602, message: expect.stringContaining('requestState is unknown or expired'), data: { code: 'invalid-arguments', field: 'requestState' } } });
    const first = await call(102, {});
    const state = (first.result as { requestState: string }).requestState;
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    const done = await call(103, { requestState: state, inputResponses: { q1: { action: 'accept', content: { name: 'Bo' } } } });
    expect(textOf(done.result as { content: unknown[] })).toContain('Bo');
    const replayed = await call(104, { requestState: state, inputResponses: { q1: { action: 'accept', content: { name: 'Bo' } } } });
    expect(replayed).toMatchObject({ error: { code: -32602 } });
    const wrongTool = await call(105, {});
    const misnamed = await call(106, { requestState: (wrongTool.result as { requestState: string }).requestState, inputResponses: {} }, 'mcp__a__echo');
    expect(misnamed).toMatchObject({ error: { code: -32602, message: expect.stringContaining('belongs to tools/call "mcp__hf__ask"') } });
    const abandoned = await call(107, { arguments: { method: 'elicitation/create', params: { message: 'Wait', requestedSchema: { type: 'object' } } } }, 'mcp__a__ask_client');
    expect(abandoned.result).toMatchObject({ resultType: 'input_required' });
    expect(gateway.rounds.size).toBe(1);
    await waitForAsync(async () => gateway.rounds.size === 0, 5000);
    const late = await call(108, { requestState: (abandoned.result as { requestState: string }).requestState, inputResponses: { q1: { action: 'decline' } } }, 'mcp__a__ask_client');
    expect(late).toMatchObject({ error: { code: -32602, data: { code: 'invalid-arguments', field: 'requestState' } } });
    // The expired round's backend call was cancelled at the backend.
    let received: unknown[] = [];
    for (let id = 109; received.length === 0 && id < 200; id++) {
      received = JSON.parse(textOf((await call(id, {}, 'mcp__a__cancellations')).result as { content: unknown[] }));
      if (received.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(received).toHaveLength(1);
  });

  it('prompts/get and resources/read whose backend asks take the same rounds', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { p: fixture('asks-in-prompts.mjs') } }, { capabilities: { elicitation: true } });
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager);
    cleanups.push(() => gateway.close());
    const [clientSide, serverSide] = createMemoryChannelPair();
    gateway.connect(serverSide);
    const client = new Client({ name: 'mrtr', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => (asked.push(String(request.params.message)), { action: 'accept', content: { name: 'tides' } }));
    await client.connect(new ChannelTransport(clientSide));
    cleanups.push(() => client.close());
    const prompt = await client.getPrompt({ name: 'mcp__p__topic', arguments: {} });
    expect(prompt.messages[0].content).toMatchObject({ type: 'text', text: 'Talk about tides' });
    await client.listResources();
    const read = await client.readResource({ uri: 'ask://topic' });
    expect(read.contents[0]).toMatchObject({ uri: 'ask://topic', text: 'read for tides' });
    expect(asked).toEqual(['Which topic?', 'Who reads?']);
    expect(gateway.rounds.size).toBe(0);
  });

  it('a long-lived connection that ends cancels its calls waiting between rounds', async () => {
    const { gateway, client, clientSide } = await asking();
    const answers: Record<string, unknown>[] = [];
    clientSide.onMessage((m) => void ((m as { id?: unknown }).id === 900 && answers.push(m as unknown as Record<string, unknown>)));
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    await clientSide.send({ jsonrpc: '2.0', id: 900, method: 'tools/call', params: { name: 'mcp__a__ask_client', arguments: { method: 'elicitation/create', params: { message: 'Wait', requestedSchema: { type: 'object' } } }, _meta: meta } });
    await waitForAsync(async () => answers.length === 1);
    expect(answers[0].result).toMatchObject({ resultType: 'input_required' });
    expect(gateway.rounds.size).toBe(1);
    await client.close();
    expect(gateway.rounds.size).toBe(0);
    // The backend heard of it: asked through a second client.
    const [otherSide, otherServer] = createMemoryChannelPair();
    gateway.connect(otherServer);
    const other = new Client({ name: 'other', version: '1.0.0' });
    await other.connect(new ChannelTransport(otherSide));
    cleanups.push(() => other.close());
    let received: unknown[] = [];
    await waitForAsync(async () => {
      received = JSON.parse(textOf((await other.callTool({ name: 'mcp__a__cancellations', arguments: {} })) as { content: unknown[] }));
      return received.length > 0;
    });
    expect(received).toHaveLength(1);
  });

  it('refuses an inputTimeoutMs that is not a positive number, naming it and the value', () => {
    const manager = McpServerManager.fromConfig({ mcpServers: {} });
    cleanups.push(() => manager.shutdown());
    expect(() => new Gateway(manager, { inputTimeoutMs: -5 })).toThrow('gateway option `inputTimeoutMs` must be a positive number of milliseconds up to 2147483647, got -5 (number)');
  });

  it('a client that declared neither capability has the question declined, as before', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { hf: fixture('host-features.mjs') } }, { capabilities: { elicitation: true } });
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager);
    cleanups.push(() => gateway.close());
    const [clientSide, serverSide] = createMemoryChannelPair();
    gateway.connect(serverSide);
    const client = new Client({ name: 'plain', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new ChannelTransport(clientSide));
    cleanups.push(() => client.close());
    expect(textOf((await client.callTool({ name: 'mcp__hf__ask', arguments: {} })) as { content: unknown[] })).toContain('decline');
  });

  it("a client that declared elicitation but not sampling: a backend's sampling is method not found, in either era", async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { hf: fixture('host-features.mjs') } }, { capabilities: { elicitation: true, sampling: true } });
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager);
    cleanups.push(() => gateway.close());
    const [legacySide, legacyServerSide] = createMemoryChannelPair();
    gateway.connect(legacyServerSide);
    const legacy = await McpClient.over(legacySide, { protocolVersion: '2025-11-25', handlers: { elicitation: async () => ({ action: 'accept', content: { name: 'Ada' } }) } });
    cleanups.push(() => legacy.close());
    const [modernSide, modernServerSide] = createMemoryChannelPair();
    gateway.connect(modernServerSide);
    const modern = new Client({ name: 'asks-only', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
    modern.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ada' } }));
    await modern.connect(new ChannelTransport(modernSide));
    cleanups.push(() => modern.close());
    // The fixture's tool answers with what its sampling request got back: here the JSON-RPC error.
    const legacyAnswer = JSON.parse(textOf(await legacy.callTool('mcp__hf__sample', { q: 'hi' })));
    const modernAnswer = JSON.parse(textOf((await modern.callTool({ name: 'mcp__hf__sample', arguments: { q: 'hi' } })) as { content: unknown[] }));
    for (const answer of [legacyAnswer, modernAnswer]) expect(answer).toMatchObject({ error: { code: -32601, message: 'Method not found: sampling/createMessage' } });
    // Elicitation, which both declared, still reaches them.
    expect(textOf(await legacy.callTool('mcp__hf__ask', {}))).toContain('Ada');
    expect(textOf((await modern.callTool({ name: 'mcp__hf__ask', arguments: {} })) as { content: unknown[] })).toContain('Ada');
  });
});

describe.each<Era>(['legacy', '2026'])('the gateway to an SDK v2 client (%s era)', (era) => {
  it('negotiates the era and names itself', async () => {
    const { client, starts } = await setUp({ a: fixture('echo-server.mjs') }, era);
    expect(client.getServerVersion()).toMatchObject({ name: 'lazy-mcp' });
    expect(client.getNegotiatedProtocolVersion()).toBe(era === '2026' ? '2026-07-28' : '2025-11-25');
    expect(client.getInstructions()).toContain('mcp__<server>__<tool>');
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, prompts: {}, resources: {} });
    expect(starts).toEqual([]);
  });

  it('lists the pool tools under public names; from a warm cache it starts nothing, and a call starts only its server', async () => {
    const cacheDir = tempDir();
    const servers = { a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs') };
    const cold = await setUp(servers, era, {}, { cacheDir });
    const { tools } = await cold.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__a__echo', 'mcp__b__echo', 'mcp__a__add']));
    expect(tools.find((t) => t.name === 'mcp__a__echo')?.description).toContain('Echo the text back');
    expect(cold.starts.sort()).toEqual(['a', 'b']);
    await cold.manager.shutdown();

    const warm = await setUp(servers, era, {}, { cacheDir });
    expect((await warm.client.listTools()).tools.map((t) => t.name).sort()).toEqual(tools.map((t) => t.name).sort());
    expect(warm.starts).toEqual([]);
    const result = await warm.client.callTool({ name: 'mcp__b__echo', arguments: { text: 'hi' } });
    expect(textOf(result as { content: unknown[] })).toBe('hi');
    expect(warm.starts).toEqual(['b']);
  });

  it('from a warm cache, tools/list starts nothing even for a 2026 backend that answers ttlMs: 0', async () => {
    const cacheDir = tempDir();
    // The SDK v2 server gives its lists the SDK's default hints: ttlMs 0, private.
    const servers = { modern: fixture('sdk2-modern-server.mjs'), a: fixture('echo-server.mjs') };
    const cold = await setUp(servers, era, {}, { cacheDir });
    expect((await cold.client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__modern__echo', 'mcp__a__echo']));
    expect(cold.manager.status().modern.era).toBe('2026');
    await cold.manager.shutdown();

    const warm = await setUp(servers, era, {}, { cacheDir });
    for (let i = 0; i < 3; i++) expect((await warm.client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__modern__echo', 'mcp__a__echo']));
    expect(warm.starts).toEqual([]);
    const result = await warm.client.callTool({ name: 'mcp__modern__echo', arguments: { text: 'hi' } });
    expect(textOf(result as { content: unknown[] })).toBe('hi');
    expect(warm.starts).toEqual(['modern']);
  });

  it('maps failures to JSON-RPC errors with our code and server in data, and stays up', async () => {
    const { client } = await setUp({ a: fixture('echo-server.mjs'), gone: { command: '/nonexistent/lazy-mcp-test-binary' } }, era);
    const unknown = await client.callTool({ name: 'mcp__a__nope', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: -32602, data: { code: 'unknown-tool', server: 'a' } });
    const down = await client.callTool({ name: 'mcp__gone__echo', arguments: {} }).catch((e: unknown) => e);
    expect(down).toMatchObject({ code: -32603, data: { server: 'gone' } });
    const crash = await client.callTool({ name: 'mcp__a__crash', arguments: {} }).catch((e: unknown) => e);
    expect(crash).toMatchObject({ data: { code: 'peer-exited', server: 'a' } });
    const again = await client.callTool({ name: 'mcp__a__echo', arguments: { text: 'still here' } });
    expect(textOf(again as { content: unknown[] })).toBe('still here');
    const backendError = await client.callTool({ name: 'mcp__a__missing_file', arguments: {} }).catch((e: unknown) => e);
    expect(backendError).toMatchObject({ code: -32602, data: { code: 'rpc-error', server: 'a', rpc: { code: -32602, message: expect.stringContaining('input file not found') } } });
    const own = await client.callTool({ name: 'mcp__a__fail', arguments: { why: 'nope' } });
    expect(own).toMatchObject({ isError: true });
  });

  it('forwards progress to the client and its cancel to the backend', async () => {
    const { client } = await setUp({ a: fixture('echo-server.mjs') }, era);
    const seen: number[] = [];
    const done = await client.callTool({ name: 'mcp__a__slow', arguments: { ms: 150, interval: 50 } }, { onprogress: (p) => seen.push(p.progress) });
    expect(textOf(done as { content: unknown[] })).toBe('done');
    expect(seen).toEqual([1, 2, 3]);

    const abort = new AbortController();
    const slow = client.callTool({ name: 'mcp__a__slow', arguments: { ms: 20000, interval: 20 } }, { signal: abort.signal, onprogress: () => abort.abort() });
    await expect(slow).rejects.toThrow();
    // The backend's own record of the cancellations it received, polled with a bound.
    let received: unknown[] = [];
    await waitForAsync(async () => {
      received = JSON.parse(textOf((await client.callTool({ name: 'mcp__a__cancellations', arguments: {} })) as { content: unknown[] }));
      return received.length > 0;
    });
    expect(received).toHaveLength(1);
  });
  it('lists prompts under public names and gets one from the server that has it; a bad name is invalid params', async () => {
    const { client, starts } = await setUp({ a: fixture('echo-server.mjs'), hf: fixture('host-features.mjs') }, era);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['mcp__hf__greet']);
    expect(prompts[0]).toMatchObject({ title: 'Greet someone', arguments: [{ name: 'who', required: true }] });
    const got = await client.getPrompt({ name: 'mcp__hf__greet', arguments: { who: 'Ada' } });
    expect(got.messages[0]).toMatchObject({ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } });
    await expect(client.getPrompt({ name: 'mcp__hf__gret', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('mcp__hf__greet') });
    expect(starts.sort()).toEqual(['a', 'hf']);
  });

  it('lists and reads resources, routing a URI to the server whose listing or template named it', async () => {
    const { client, starts } = await setUp({ a: fixture('echo-server.mjs') }, era);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['mem://farewell', 'mem://greeting']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['mem://{name}']);
    const read = await client.readResource({ uri: 'mem://greeting' });
    expect(read.contents).toEqual([expect.objectContaining({ uri: 'mem://greeting', text: 'hello' })]);
    expect(starts).toEqual(['a']);
    const missing = await client.readResource({ uri: 'other://x' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: -32602, data: { uri: 'other://x' } });
  });

  it('lists a URI two servers share under a distinct URI per server, and reads each from the server that listed it', async () => {
    const { client } = await setUp({ alpha: fixture('repo-resources.mjs', 'alpha'), 'b/eta': fixture('repo-resources.mjs', 'beta') }, era);
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri).sort();
    // Unique URIs unchanged; the shared one once per server, naming it (percent-encoded).
    expect(uris).toEqual(['git://alpha/HEAD', 'git://beta/HEAD', 'lazy-mcp:alpha/git://working-directory', 'lazy-mcp:b%2Feta/git://working-directory']);
    const text = async (uri: string) => {
      const { contents } = await client.readResource({ uri });
      expect(contents[0].uri).toBe(uri);
      return (contents[0] as { text: string }).text;
    };
    expect(await text('lazy-mcp:alpha/git://working-directory')).toBe('working directory of alpha');
    expect(await text('lazy-mcp:b%2Feta/git://working-directory')).toBe('working directory of beta');
    expect(await text('git://beta/HEAD')).toBe('HEAD of beta');
    // The bare shared URI is ambiguous: refused, naming the URIs to read instead, never sent to one by guess.
    const bare = await client.readResource({ uri: 'git://working-directory' }).catch((e: unknown) => e);
    expect(bare).toMatchObject({ code: -32602, message: expect.stringContaining('lazy-mcp:alpha/git://working-directory, lazy-mcp:b%2Feta/git://working-directory') });
    // Templates likewise: one per server, and a URI expanded from each reaches its server.
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual(['lazy-mcp:alpha/git://log/{ref}', 'lazy-mcp:b%2Feta/git://log/{ref}']);
    expect(await text('lazy-mcp:b%2Feta/git://log/main')).toBe('log of main in beta');
    expect(await text('lazy-mcp:alpha/git://log/dev')).toBe('log of dev in alpha');
    await expect(client.readResource({ uri: 'git://log/main' })).rejects.toMatchObject({ code: -32602 });
  });

  it('passes completion/complete to the server owning the prompt (public name) or resource template', async () => {
    const { client, starts } = await setUp({ a: fixture('echo-server.mjs'), paint: fixture('sdk2-completes.mjs') }, era);
    expect(client.getServerCapabilities()).toMatchObject({ completions: {} });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('mcp__paint__paint');
    const forPrompt = await client.complete({ ref: { type: 'ref/prompt', name: 'mcp__paint__paint' }, argument: { name: 'color', value: 'r' }, context: { arguments: { shade: 'dark' } } });
    expect(forPrompt.completion).toMatchObject({ values: ['dark red', 'dark rose', 'dark ruby'], total: 3 });
    const forTemplate = await client.complete({ ref: { type: 'ref/resource', uri: 'paint://{color}' }, argument: { name: 'color', value: 'b' } });
    expect(forTemplate.completion.values).toEqual(['blue']);
    const unknown = await client.complete({ ref: { type: 'ref/prompt', name: 'mcp__paint__nope' }, argument: { name: 'color', value: '' } }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: -32602, message: expect.stringContaining('mcp__paint__nope') });
    const noTemplate = await client.complete({ ref: { type: 'ref/resource', uri: 'other://{x}' }, argument: { name: 'x', value: '' } }).catch((e: unknown) => e);
    expect(noTemplate).toMatchObject({ code: -32602 });
    expect(starts.sort()).toEqual(['a', 'paint']);
  });

  it('in search mode lists search_tools and call_tool, finds a tool and calls it', async () => {
    const { client, starts } = await setUp({ a: fixture('echo-server.mjs') }, era, { search: true });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    expect(starts).toEqual([]);
    expect(client.getInstructions()).toContain('search_tools');
    // A first search on a cold pool (no cache) lists the tools first, so it finds them.
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers' } });
    expect((found.structuredContent as { tools: { name: string }[] }).tools[0].name).toBe('mcp__a__add');
    const called = await client.callTool({ name: 'call_tool', arguments: { name: 'mcp__a__echo', arguments: { text: 'via search mode' } } });
    expect(textOf(called as { content: unknown[] })).toBe('via search mode');
    const bad = await client.callTool({ name: 'call_tool', arguments: { name: 'mcp__a__nope' } });
    expect(bad).toMatchObject({ isError: true });
  });
});

describe('the gateway and its clients', () => {
  it('forwards a backend tools/list_changed to a legacy client', async () => {
    const { client } = await setUp({ a: fixture('echo-server.mjs') }, 'legacy');
    let changes = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => void changes++);
    await client.callTool({ name: 'mcp__a__tools_changed', arguments: {} });
    await waitForAsync(async () => changes > 0, 5000);
    expect(changes).toBeGreaterThan(0);
  });

  it('forwards a backend tools/list_changed to a 2026 client through its subscriptions/listen stream', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs') } });
    cleanups.push(() => manager.shutdown());
    const gateway = new Gateway(manager);
    cleanups.push(() => gateway.close());
    const [clientSide, serverSide] = createMemoryChannelPair();
    gateway.connect(serverSide);
    const methods: string[] = [];
    serverSide.onMessage((m) => void ('method' in m && methods.push(m.method)));
    let changes = 0;
    const client = new Client(
      { name: 'test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, listChanged: { tools: { autoRefresh: false, onChanged: () => void changes++ } } },
    );
    await client.connect(new ChannelTransport(clientSide));
    cleanups.push(() => client.close());
    await client.callTool({ name: 'mcp__a__tools_changed', arguments: {} });
    await waitForAsync(async () => changes > 0, 5000);
    expect(changes).toBeGreaterThan(0);
    expect(methods).toContain('subscriptions/listen');
  });

  it("each client is its own session: closing one cancels its calls, not the other one's", async () => {
    const { gateway, client } = await setUp({ a: fixture('echo-server.mjs') }, 'legacy');
    const [otherSide, otherServer] = createMemoryChannelPair();
    gateway.connect(otherServer);
    const other = new Client({ name: 'other', version: '1.0.0' });
    await other.connect(new ChannelTransport(otherSide));
    expect(gateway.connectionCount).toBe(2);
    await client.callTool({ name: 'mcp__a__echo', arguments: { text: 'warm up' } });
    const mine = client.callTool({ name: 'mcp__a__slow', arguments: { ms: 500 } });
    let running!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const theirs = other.callTool({ name: 'mcp__a__slow', arguments: { ms: 20000, interval: 50 } }, { onprogress: () => running() }).catch((e: unknown) => e);
    await started;
    await other.close();
    await theirs;
    expect(textOf((await mine) as { content: unknown[] })).toBe('done');
    // The backend was told of the closed client's call, and only of that one.
    let received: unknown[] = [];
    await waitForAsync(async () => {
      received = JSON.parse(textOf((await client.callTool({ name: 'mcp__a__cancellations', arguments: {} })) as { content: unknown[] }));
      return received.length > 0;
    });
    expect(received).toHaveLength(1);
    expect(gateway.connectionCount).toBe(1);
  });

  it('gives its 2026 listings a ttlMs a client can cache them for', async () => {
    const { clientSide, answers } = emptyGateway<{ id: number; result: Record<string, unknown> }>();
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    for (const [id, method] of ['tools/list', 'prompts/list', 'resources/list'].entries()) await clientSide.send({ jsonrpc: '2.0', id, method, params: { _meta: meta } });
    await waitForAsync(async () => answers.length === 3, 5000);
    const hints = answers.sort((x, y) => x.id - y.id).map(({ result }) => [result.ttlMs, result.cacheScope]);
    expect(hints).toEqual([[60000, 'private'], [10000, 'private'], [10000, 'private']]);
  });

  it('answers a request naming an unknown modern revision with -32022 and the revisions it speaks', async () => {
    const { clientSide, answers } = emptyGateway();
    await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } });
    await clientSide.send({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } });
    await waitForAsync(async () => answers.length === 2, 5000);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32022, message: expect.any(String), data: { supported: ['2026-07-28'], requested: '2099-01-01' } } },
      { jsonrpc: '2.0', id: 2, result: expect.objectContaining({ resultType: 'complete', supportedVersions: ['2026-07-28'], ttlMs: 60000, cacheScope: 'private' }) },
    ]);
  });
});


describe('the gateway passes on its backends\' instructions', () => {
  it.each(['legacy', '2026'] as const)('joins each known one under its server name (%s era), starting nothing for it', async (era) => {
    const servers = { feat: fixture('host-features.mjs'), plain: fixture('echo-server.mjs'), silent: fixture('named-tools.mjs', '["a"]') };
    const cacheDir = tempDir();
    // A first manager learns what the servers say, and keeps it in the manifest cache.
    const warm = McpServerManager.fromConfig({ mcpServers: servers }, { cacheDir });
    await warm.listTools();
    await warm.shutdown();

    const { client, starts } = await setUp(servers, era, {}, { cacheDir });
    expect(client.getInstructions()).toBe(
      'Tools of several MCP servers, named mcp__<server>__<tool>.\n\n## feat\nUse greet to say hello.\n\n## plain\nEchoes things back.',
    );
    expect(starts).toEqual([]);
  });

  it('uses instructions given as they are', async () => {
    const { client } = await setUp({ feat: fixture('host-features.mjs') }, 'legacy', { instructions: 'Only mine.' });
    expect(client.getInstructions()).toBe('Only mine.');
  });
});
