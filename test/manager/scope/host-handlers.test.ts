import { McpServerManager, type ManagerOptions } from '../../../src/manager/manager.js';
import type { ElicitRequest, HostRequestContext } from '../../../src/protocol/types.js';
import { fixture, textOf, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(options: ManagerOptions = {}, servers: Record<string, object> = { f: fixture('host-features.mjs') }): McpServerManager {
  const manager = McpServerManager.fromConfig({ mcpServers: servers }, options);
  managers.push(manager);
  return manager;
}
/** The answer the fixture's tool got back from the host: a JSON-RPC response. */
const answerOf = (result: { content: unknown[] }) => JSON.parse(textOf(result));

/** An elicitation handler that answers `name` and records what it was asked. */
function answers(name: string, log: string[], content?: Record<string, unknown>) {
  return async (request: ElicitRequest, ctx: HostRequestContext) => {
    log.push(`${name}: ${request.message} (${ctx.server}, ${ctx.toolCall?.name ?? 'no call'})`);
    return { action: 'accept' as const, content: content ?? { name } };
  };
}

describe('host handlers, legacy era over stdio', () => {
  it('without handlers no capability is declared and a question is declined (elicitation) or refused -32601 (sampling)', async () => {
    const manager = manage();
    expect(answerOf(await manager.callTool('mcp__f__ask')).result).toEqual({ action: 'decline' });
    expect(answerOf(await manager.callTool('mcp__f__sample')).error).toMatchObject({ code: -32601 });
    expect(answerOf(await manager.callTool('mcp__f__roots')).error).toMatchObject({ code: -32601 });
    expect(JSON.parse(textOf(await manager.callTool('mcp__f__record'))).clientCapabilities).toEqual({});
  });

  it("the manager's handlers answer its own calls, with requestedSchema's defaults applied; an invalid answer is declined", async () => {
    const log: string[] = [];
    let content: Record<string, unknown> = { name: 'Ada' };
    const manager = manage({
      handlers: {
        elicitation: async (request, ctx) => (log.push(`${request.message} ${ctx.server} ${JSON.stringify(ctx.toolCall)}`), { action: 'accept', content }),
        sampling: async (request) => ({ role: 'assistant', content: { type: 'text', text: `re: ${JSON.stringify(request.messages[0].content)}` }, model: 'm' }),
      },
      roots: [{ uri: 'file:///work', name: 'work' }],
    });
    expect(answerOf(await manager.callTool('mcp__f__ask', { message: 'Name?' })).result).toEqual({ action: 'accept', content: { name: 'Ada', size: 3 } });
    expect(log).toEqual(['Name? f {"name":"mcp__f__ask","arguments":{"message":"Name?"}}']);
    content = { size: 'big' };
    expect(answerOf(await manager.callTool('mcp__f__ask')).result).toEqual({ action: 'decline' });
    expect(answerOf(await manager.callTool('mcp__f__sample', { q: 'hi' })).result).toMatchObject({ role: 'assistant', model: 'm' });
    expect(answerOf(await manager.callTool('mcp__f__roots')).result).toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] });
    const declared = JSON.parse(textOf(await manager.callTool('mcp__f__record'))).clientCapabilities;
    expect(Object.keys(declared).sort()).toEqual(['elicitation', 'roots', 'sampling']);
  });

  it("a session's call is answered by that session's handlers when it alone has calls in flight", async () => {
    const log: string[] = [];
    const manager = manage({ handlers: { elicitation: answers('manager', log) } });
    const chat = manager.session({ handlers: { elicitation: answers('chat', log) } });
    expect(answerOf(await chat.callTool('mcp__f__ask', { message: 'Who?' })).result.content).toEqual({ name: 'chat', size: 3 });
    expect(log).toEqual(['chat: Who? (f, mcp__f__ask)']);
  });

  it("a question about a session's call stops when the session closes (HostRequestContext.signal)", async () => {
    let signal: AbortSignal | undefined;
    const manager = manage({ capabilities: { elicitation: true } });
    const chat = manager.session({
      handlers: { elicitation: (_request, ctx) => new Promise((resolve) => ((signal = ctx.signal), ctx.signal.addEventListener('abort', () => resolve({ action: 'cancel' })))) },
    });
    const call = chat.callTool('mcp__f__ask', { message: 'Who?' }).catch((e) => e);
    expect(await waitFor(() => signal !== undefined, 10_000)).toBe(true);
    expect(signal!.aborted).toBe(false);
    chat.close();
    expect(await call).toMatchObject({ code: 'closed' });
    expect(signal!.aborted).toBe(true);
    // The server goes on serving the others.
    expect(answerOf(await manager.callTool('mcp__f__ask')).result).toEqual({ action: 'decline' });
  });

  it("a question asked while a session's call waits for the server's start goes to that session", async () => {
    const cacheDir = tempDir();
    const servers = { r: fixture('asks-roots-in-handshake.mjs') };
    const roots = [{ uri: 'file:///manager' }];
    // A first manager lists the tools into the cache: the next start is ready on known tools, and a call waits for it.
    const first = manage({ cacheDir, roots }, servers);
    await first.listTools();
    await first.shutdown();
    const chat = manage({ cacheDir, roots }, servers).session({ handlers: { roots: async () => [{ uri: 'file:///chat' }] } });
    expect(JSON.parse(textOf(await chat.callTool('mcp__r__roots-seen'))).result).toEqual({ roots: [{ uri: 'file:///chat' }] });
  });

  it('two sessions in flight on one stdio server: the question goes to the manager, never to the other chat', async () => {
    const log: string[] = [];
    const manager = manage({ handlers: { elicitation: answers('manager', log) } });
    const one = manager.session({ handlers: { elicitation: answers('one', log) } });
    const two = manager.session({ handlers: { elicitation: answers('two', log) } });
    const [a, b] = await Promise.all([
      one.callTool('mcp__f__ask', { message: 'A?', together: 2 }),
      two.callTool('mcp__f__ask', { message: 'B?', together: 2 }),
    ]);
    expect([answerOf(a).result.content.name, answerOf(b).result.content.name]).toEqual(['manager', 'manager']);
    // Ambiguous: no tool call is named either.
    expect(log.sort()).toEqual(['manager: A? (f, no call)', 'manager: B? (f, no call)']);
  });

  it('ambiguous with no manager handler: declined, not asked of either chat', async () => {
    const log: string[] = [];
    const manager = manage({ capabilities: { elicitation: true } });
    const one = manager.session({ handlers: { elicitation: answers('one', log) } });
    const two = manager.session({ handlers: { elicitation: answers('two', log) } });
    const results = await Promise.all([one.callTool('mcp__f__ask', { together: 2 }), two.callTool('mcp__f__ask', { together: 2 })]);
    expect(results.map((r) => answerOf(r).result)).toEqual([{ action: 'decline' }, { action: 'decline' }]);
    expect(log).toEqual([]);
    expect(Object.keys(JSON.parse(textOf(await manager.callTool('mcp__f__record'))).clientCapabilities)).toEqual(['elicitation']);
  });

  it('a session without its own handler uses the manager\'s; handlers must be functions', async () => {
    const log: string[] = [];
    const sampling = async () => ({ role: 'assistant' as const, content: { type: 'text', text: 'x' }, model: 'chat-model' });
    const undeclared = manage({ handlers: { elicitation: answers('manager', log) } });
    const chat = undeclared.session({ handlers: { sampling } });
    expect(answerOf(await chat.callTool('mcp__f__ask')).result.content.name).toBe('manager');
    // Sampling was not declared (only a session has a handler and `capabilities` does not name it): refused.
    expect(answerOf(await chat.callTool('mcp__f__sample')).error).toMatchObject({ code: -32601 });
    const declared = manage({ capabilities: { sampling: true } });
    expect(answerOf(await declared.session({ handlers: { sampling } }).callTool('mcp__f__sample')).result.model).toBe('chat-model');
    expect(answerOf(await declared.callTool('mcp__f__sample')).error).toMatchObject({ code: -32601 });
    expect(() => undeclared.session({ handlers: { elicitation: 'yes' as never } })).toThrow(
      expect.objectContaining({ code: 'invalid-arguments', message: expect.stringContaining('session option handlers.elicitation must be a function') }),
    );
    expect(() => McpServerManager.fromConfig({ mcpServers: {} }, { handlers: { roots: 1 as never } })).toThrow(expect.objectContaining({ code: 'invalid-config' }));
  });
});

describe('host handlers, 2026 era (multi round-trip requests)', () => {
  it('two sessions calling one server at once each answer their own question, and the call is re-sent with the answers', async () => {
    const log: string[] = [];
    const manager = manage({ capabilities: { elicitation: true } }, { m: fixture('modern-asks.mjs') });
    const ada = manager.session({ handlers: { elicitation: answers('Ada', log) } });
    const bob = manager.session({ handlers: { elicitation: answers('Bob', log) } });
    const [a, b] = await Promise.all([ada.callTool('mcp__m__ask', { who: 'ada' }), bob.callTool('mcp__m__ask', { who: 'bob' })]);
    expect(manager.status().m.era).toBe('2026');
    expect(JSON.parse(textOf(a))).toEqual({ answer: { action: 'accept', content: { name: 'Ada' } }, state: 'state-for-adaé' });
    expect(JSON.parse(textOf(b))).toEqual({ answer: { action: 'accept', content: { name: 'Bob' } }, state: 'state-for-bobé' });
    expect(log.sort()).toEqual(['Ada: Who is ada? (m, mcp__m__ask)', 'Bob: Who is bob? (m, mcp__m__ask)']);
    const rounds = JSON.parse(textOf(await manager.callTool('mcp__m__rounds')));
    expect(rounds).toHaveLength(4);
    expect(rounds.every((r: { elicitation: boolean }) => r.elicitation)).toBe(true);
  });

  it('a session\'s own elicitation handler is declared in its requests even when the manager has none (SDK v2 server, stdio)', async () => {
    const log: string[] = [];
    const manager = manage({}, { modern: fixture('sdk2-modern-server.mjs'), m: fixture('modern-asks.mjs') });
    const chat = manager.session({ handlers: { elicitation: answers('Ada', log, { sure: true, name: 'Ada' }) } });
    expect(textOf(await chat.callTool('mcp__modern__confirm', { what: 'deploy' }))).toBe('accept: {"sure":true,"name":"Ada"} state=state for deploy');
    expect(log).toEqual(['Ada: Really deploy? (modern, mcp__modern__confirm)']);
    expect(manager.status().modern.era).toBe('2026');
    // Per request: the session's call declares elicitation, the manager's own calls do not.
    expect(JSON.parse(textOf(await chat.callTool('mcp__m__ask', { who: 'ada' }))).answer).toEqual({ action: 'accept', content: { sure: true, name: 'Ada' } });
    const plain = manager.session();
    await expect(plain.callTool('mcp__m__ask', { who: 'nobody' })).rejects.toMatchObject({ code: 'protocol-error', message: expect.stringContaining('did not declare the capability') });
    const rounds = JSON.parse(textOf(await manager.callTool('mcp__m__rounds')));
    expect(rounds.map((r: { elicitation: boolean }) => r.elicitation)).toEqual([true, true, false]);
  });

  it('a session without a handler declines; an answer that breaks requestedSchema is declined', async () => {
    const manager = manage({ capabilities: { elicitation: true } }, { m: fixture('modern-asks.mjs') });
    expect(JSON.parse(textOf(await manager.session().callTool('mcp__m__ask', { who: 'x' }))).answer).toEqual({ action: 'decline' });
    const wrong = manager.session({ handlers: { elicitation: async () => ({ action: 'accept', content: { name: 7 } }) } });
    expect(JSON.parse(textOf(await wrong.callTool('mcp__m__ask', { who: 'y' }))).answer).toEqual({ action: 'decline' });
  });

  it("cancelling the call aborts its handler's signal", async () => {
    const manager = manage({ capabilities: { elicitation: true } }, { m: fixture('modern-asks.mjs') });
    let handlerSignal: AbortSignal | undefined;
    const controller = new AbortController();
    let outcome: unknown;
    const asked = new Promise<void>((resolve) => {
      const chat = manager.session({
        handlers: {
          elicitation: (_request, ctx) => {
            handlerSignal = ctx.signal;
            resolve();
            return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }));
          },
        },
      });
      void chat.callTool('mcp__m__ask_forever', {}, { signal: controller.signal }).catch((e) => (outcome = e));
    });
    await asked;
    expect(handlerSignal!.aborted).toBe(false);
    controller.abort();
    expect(await waitFor(() => outcome !== undefined, 5000)).toBe(true);
    expect(handlerSignal!.aborted).toBe(true);
    expect(outcome).toMatchObject({ code: 'cancelled' });
  });

  it('prompts and server info in the 2026 era', async () => {
    const manager = manage({}, { m: fixture('modern-asks.mjs') });
    expect((await manager.listPrompts()).map((p) => p.name)).toEqual(['mcp__m__hello']);
    expect((await manager.session().getPrompt('mcp__m__hello', { who: 'Ada' })).messages[0].content).toEqual({ type: 'text', text: 'Hello Ada' });
    expect(await manager.serverInfo('m')).toMatchObject({ era: '2026', protocolVersion: '2026-07-28', instructions: 'Modern.', serverInfo: { name: 'modern-asks' } });
  });

  it('setLogLevel sends nothing to a 2026 server and says so in a log event', async () => {
    const manager = manage({}, { m: fixture('modern-asks.mjs') });
    const notes: unknown[] = [];
    manager.on('log', ({ server, logger, data }) => logger === 'lazy-mcp' && notes.push([server, data]));
    await manager.setLogLevel('m', 'debug');
    expect(notes).toEqual([['m', expect.stringContaining('revision 2026-07-28 has no logging/setLevel')]]);
  });
});
