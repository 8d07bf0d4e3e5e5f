import { z } from 'zod';
import { McpError } from '../../../src/errors.js';
import { RequestEngine } from '../../../src/protocol/engine/engine.js';
import { memoryPair } from '../../support/memory-peer.js';

function setup(options: { timeout?: number; abandon?: boolean } = {}) {
  const { near, peer } = memoryPair({ abandon: options.abandon });
  const engine = new RequestEngine(near, { name: 'mem', timeout: options.timeout ?? 5000 });
  return { near, peer, engine };
}

/** What `promise` rejects with (an McpError in every case here). */
const rejection = (promise: Promise<unknown>): Promise<McpError> => promise.then(() => { throw new Error('resolved'); }, (e: McpError) => e);
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('RequestEngine: requests out', () => {
  it('matches answers to requests by id, whatever their order, and counts what is pending', async () => {
    const { peer, engine } = setup();
    const a = engine.request({ method: 'a', params: { n: 1 }, phase: 'tools/call' });
    const b = engine.request({ method: 'b', params: {}, phase: 'tools/call' });
    expect(engine.inFlight).toBe(2);
    const [ma, mb] = [await peer.next('a'), await peer.next('b')];
    expect(ma).toMatchObject({ jsonrpc: '2.0', method: 'a', params: { n: 1 } });
    expect(ma.id).not.toBe(mb.id);
    peer.reply(mb.id, { which: 'b' });
    peer.reply(ma.id, { which: 'a' });
    await expect(a).resolves.toEqual({ which: 'a' });
    await expect(b).resolves.toEqual({ which: 'b' });
    expect(engine.inFlight).toBe(0);
  });

  it('validates the result against the schema and names the bad field', async () => {
    const { peer, engine } = setup();
    const schema = z.object({ tools: z.array(z.string()) });
    const bad = engine.request({ method: 'tools/list', params: {}, phase: 'tools/list', schema });
    peer.reply((await peer.next('tools/list')).id, { tools: [1] });
    await expect(bad).rejects.toMatchObject({ code: 'protocol-error', phase: 'tools/list', message: expect.stringContaining('invalid tools/list result: tools.0:') });
  });

  it('turns an error answer into rpc-error with the code, message and data', async () => {
    const { peer, engine } = setup();
    const call = engine.request({ method: 'x', params: {}, phase: 'tools/call', label: 'tools/call "x"' });
    peer.fail((await peer.next('x')).id, -32602, 'bad args', { field: 'a' });
    const error = await rejection(call);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'rpc-error', server: 'mem', rpc: { code: -32602, message: 'bad args', data: { field: 'a' } } });
    expect(error.message).toBe('server "mem": tools/call "x" failed: bad args (JSON-RPC error -32602)');
  });

  it('drops an answer for an id nobody waits on', async () => {
    const { peer, engine } = setup();
    peer.reply(999, { late: true });
    await tick();
    const call = engine.request({ method: 'ok', params: {}, phase: 'ping' });
    peer.reply((await peer.next('ok')).id, {});
    await expect(call).resolves.toEqual({});
  });

  it('settles a request only by its id exactly as sent: "0x7", [7], true, "7" settle nothing', async () => {
    const { peer, engine } = setup();
    let progressed = 0;
    const call = engine.request({ method: 'x', params: {}, phase: 'tools/call' }, { onProgress: () => progressed++ });
    const { id } = await peer.next('x');
    expect(typeof id).toBe('number');
    for (const lookalike of [`0x${id.toString(16)}`, [id], String(id), `${id}.0`, ` ${id}`]) {
      peer.reply(lookalike, { wrong: lookalike });
      peer.notify('notifications/progress', { progressToken: lookalike, progress: 1 });
    }
    if (id === 1) peer.reply(true, { wrong: true });
    await tick();
    expect(engine.inFlight).toBe(1);
    expect(progressed).toBe(0);
    peer.notify('notifications/progress', { progressToken: id, progress: 1 });
    peer.reply(id, { right: true });
    await expect(call).resolves.toEqual({ right: true });
    expect(progressed).toBe(1);
  });

  it('times requests out on one shared timer, each at its own deadline, and tells the peer', async () => {
    const { peer, engine } = setup();
    const started = performance.now();
    const short = engine.request({ method: 'short', params: {}, phase: 'tools/call' }, { timeout: 60 });
    const long = engine.request({ method: 'long', params: {}, phase: 'tools/call' }, { timeout: 10_000 });
    const error = await rejection(short);
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(error).toMatchObject({ code: 'timeout', message: 'server "mem": short timed out after 60 ms; the request was cancelled' });
    const shortId = (await peer.next('short')).id;
    const cancelled = await peer.next('notifications/cancelled');
    expect(cancelled.params).toEqual({ requestId: shortId, reason: error.message });
    // The longer one is untouched by the sweep and still answerable.
    expect(engine.inFlight).toBe(1);
    peer.reply((await peer.next('long')).id, { fine: true });
    await expect(long).resolves.toEqual({ fine: true });
  });

  it('sends a progress token, reports progress, and lets progress restart the timeout', async () => {
    const { peer, engine } = setup();
    const seen: number[] = [];
    const call = engine.request({ method: 'work', params: { a: 1, _meta: { keep: 'me' } }, phase: 'tools/call' }, { timeout: 300, onProgress: (p) => seen.push(p.progress) });
    const sent = await peer.next('work');
    expect(sent.params).toEqual({ a: 1, _meta: { keep: 'me', progressToken: sent.id } });
    // 6 × 100 ms of progress outlasts the 300 ms timeout only because each one restarts it.
    for (let i = 1; i <= 6; i++) {
      await new Promise((r) => setTimeout(r, 100));
      peer.notify('notifications/progress', { progressToken: sent.id, progress: i, total: 6, message: `step ${i}` });
    }
    await tick();
    peer.reply(sent.id, { done: true });
    await expect(call).resolves.toEqual({ done: true });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('counts time-outs from startedAt when given, tells the whole timeout, and lets progress restart all of it', async () => {
    const { peer, engine } = setup();
    // The call began 200 ms before this request: 100 of its 300 ms are left.
    const began = performance.now() - 200;
    const sentAt = performance.now();
    const late = engine.request({ method: 'late', params: {}, phase: 'tools/call' }, { timeout: 300, startedAt: began });
    const error = await rejection(late);
    expect(performance.now() - sentAt).toBeLessThan(280);
    expect(error).toMatchObject({ code: 'timeout', message: expect.stringContaining('timed out after 300 ms') });

    // Progress restarts the whole 300 ms, not what was left at the start.
    const call = engine.request({ method: 'work', params: {}, phase: 'tools/call', withProgress: true }, { timeout: 300, startedAt: performance.now() - 200 });
    const sent = await peer.next('work');
    peer.notify('notifications/progress', { progressToken: sent.id, progress: 1 });
    const progressedAt = performance.now();
    // Past the 100 ms the start left, within the 300 ms a progress gives.
    await new Promise((r) => setTimeout(r, 150));
    expect(performance.now() - progressedAt).toBeGreaterThanOrEqual(120);
    peer.reply(sent.id, { done: true });
    await expect(call).resolves.toEqual({ done: true });
  });

  it('ends a request at maxTotalTimeout however much progress arrives', async () => {
    const { peer, engine } = setup();
    const call = engine.request({ method: 'work', params: {}, phase: 'tools/call', withProgress: true }, { timeout: 10_000, maxTotalTimeout: 150 });
    const sent = await peer.next('work');
    const pump = setInterval(() => peer.notify('notifications/progress', { progressToken: sent.id, progress: 1 }), 20);
    const error = await rejection(call).finally(() => clearInterval(pump));
    expect(error).toMatchObject({ code: 'timeout', message: expect.stringContaining('timed out after 150 ms in total') });
  });

  it('does not restart the timeout on progress when resetTimeoutOnProgress is false', async () => {
    const { peer, engine } = setup();
    const call = engine.request({ method: 'work', params: {}, phase: 'tools/call', withProgress: true }, { timeout: 150, resetTimeoutOnProgress: false });
    const sent = await peer.next('work');
    const pump = setInterval(() => peer.notify('notifications/progress', { progressToken: sent.id, progress: 1 }), 20);
    await expect(call.finally(() => clearInterval(pump))).rejects.toMatchObject({ code: 'timeout' });
  });

  it('cancels on abort: rejects with cancelled carrying the reason, and sends notifications/cancelled', async () => {
    const { peer, engine } = setup();
    const controller = new AbortController();
    const call = engine.request({ method: 'slow', params: {}, phase: 'tools/call' }, { signal: controller.signal });
    const sent = await peer.next('slow');
    controller.abort(new Error('user pressed stop'));
    const error = await rejection(call);
    expect(error).toMatchObject({ code: 'cancelled', message: 'server "mem": slow was cancelled' });
    expect((error.cause as Error).message).toBe('user pressed stop');
    expect((await peer.next('notifications/cancelled')).params).toMatchObject({ requestId: sent.id });
    // A late answer to it is dropped.
    peer.reply(sent.id, {});
    await tick();
    expect(engine.inFlight).toBe(0);
  });

  it('rejects at once on a signal aborted before the call, sending nothing', async () => {
    const { peer, engine } = setup();
    const error = await rejection(engine.request({ method: 'never', params: {}, phase: 'tools/call' }, { signal: AbortSignal.abort() }));
    expect(error.code).toBe('cancelled');
    await tick();
    expect(peer.received).toEqual([]);
  });

  it('abandons the request on a channel with per-request streams instead of sending notifications/cancelled', async () => {
    const { near, peer, engine } = setup({ abandon: true });
    const abandoned: unknown[] = [];
    const original = near.abandon.bind(near);
    near.abandon = (id) => (abandoned.push(id), original(id));
    const controller = new AbortController();
    const call = engine.request({ method: 'slow', params: {}, phase: 'tools/call' }, { signal: controller.signal });
    const sent = await peer.next('slow');
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'cancelled' });
    await tick();
    expect(abandoned).toEqual([sent.id]);
    expect(peer.sent('notifications/cancelled')).toEqual([]);
  });

  it('never sends notifications/cancelled for a silent (handshake) request', async () => {
    const { peer, engine } = setup();
    const call = engine.request({ method: 'initialize', params: {}, phase: 'initialize', silentCancel: true }, { timeout: 30 });
    await expect(call).rejects.toMatchObject({ code: 'timeout' });
    await tick();
    expect(peer.sent('notifications/cancelled')).toEqual([]);
  });

  it('rejects a request whose params cannot be sent, alone, with protocol-error; the channel stays open', async () => {
    const { near, peer, engine } = setup();
    const error = await rejection(engine.request({ method: 'bad', params: { f: () => 1 }, phase: 'tools/call' }));
    expect(error).toMatchObject({ code: 'protocol-error', message: expect.stringContaining('bad was not sent') });
    expect(near.isOpen).toBe(true);
    const ok = engine.request({ method: 'ok', params: {}, phase: 'ping' });
    peer.reply((await peer.next('ok')).id, {});
    await expect(ok).resolves.toEqual({});
  });

  it('rejects a bad timeout option naming the field and the value', async () => {
    const { engine } = setup();
    await expect(engine.request({ method: 'x', params: {}, phase: 'ping' }, { timeout: -1 })).rejects.toMatchObject({
      code: 'invalid-config',
      message: 'the option `timeout` must be a non-negative number of milliseconds, got -1 (number)',
    });
    await expect(engine.request({ method: 'x', params: {}, phase: 'ping' }, { maxTotalTimeout: 'soon' as never })).rejects.toMatchObject({ code: 'invalid-config' });
  });
});

describe('RequestEngine: the end of the session', () => {
  it('close() rejects every pending request with closed, then refuses new requests and notifications', async () => {
    const { engine, near } = setup();
    const a = engine.request({ method: 'a', params: {}, phase: 'tools/call', label: 'tools/call "a"' });
    const b = engine.request({ method: 'b', params: {}, phase: 'tools/list' });
    const closes: McpError[] = [];
    engine.onClose((reason) => closes.push(reason));
    await engine.close();
    await expect(a).rejects.toMatchObject({ code: 'closed', phase: 'tools/call', message: 'server "mem": tools/call "a" failed: the connection was closed' });
    await expect(b).rejects.toMatchObject({ code: 'closed', phase: 'tools/list' });
    expect(near.isOpen).toBe(false);
    expect(engine.closedReason?.code).toBe('closed');
    await expect(engine.request({ method: 'c', params: {}, phase: 'ping' })).rejects.toMatchObject({ code: 'closed' });
    await expect(engine.notify('n')).rejects.toMatchObject({ code: 'closed' });
    await engine.close();
    expect(closes.map((r) => r.code)).toEqual(['closed']);
  });

  it('keeps a close reason whole when it does not begin with the server\'s name', async () => {
    const { engine, peer } = setup();
    const call = engine.request({ method: 'a', params: {}, phase: 'tools/call', label: 'tools/call "a"' });
    await peer.next('a');
    await peer.channel.close();
    const error = await rejection(call);
    expect(error).toMatchObject({ code: 'peer-eof', phase: 'tools/call', server: 'mem' });
    expect(error.message).toBe('server "mem": tools/call "a" failed: the peer closed the channel');
    const other = setup();
    const late = other.engine.request({ method: 'b', params: {}, phase: 'tools/list' });
    other.near.fail(new McpError('peer-exited', 'server "elsewhere": x', { exitCode: 1 }));
    expect((await rejection(late)).message).toBe('server "mem": b failed: server "elsewhere": x');
  });

  it('rejects pending requests with the channel failure, keeping its exit status and stderr', async () => {
    const { engine, near } = setup();
    const call = engine.request({ method: 'a', params: {}, phase: 'tools/call' });
    near.fail(new McpError('peer-exited', 'server "mem": the server process exited with code 3', { exitCode: 3, stderrTail: ['boom'] }));
    const error = await rejection(call);
    expect(error).toMatchObject({ code: 'peer-exited', exitCode: 3, stderrTail: ['boom'], phase: 'tools/call' });
    expect(error.message).toBe('server "mem": a failed: the server process exited with code 3');
    expect(error.cause).toBeInstanceOf(McpError);
  });

  it('rejects pending requests with protocol-error when the channel ends on an oversized message', async () => {
    const { engine, near } = setup();
    const call = engine.request({ method: 'big', params: {}, phase: 'resources/read' });
    near.fail(new McpError('protocol-error', 'server "mem": a message of 70000000 bytes is over the 67108864-byte limit (maxMessageBytes)'));
    await expect(call).rejects.toMatchObject({ code: 'protocol-error', phase: 'resources/read', message: expect.stringContaining('big failed: a message of 70000000 bytes') });
    expect(engine.closedReason?.code).toBe('protocol-error');
  });

  it('ends with peer-eof when the peer closes, and aborts the handlers still running', async () => {
    const { engine, peer } = setup();
    let signal: AbortSignal | undefined;
    engine.onRequest('wait', (_params, ctx) => {
      signal = ctx.signal;
      return new Promise(() => undefined);
    });
    peer.request('w1', 'wait');
    await tick();
    await tick();
    const pending = engine.request({ method: 'a', params: {}, phase: 'tools/call' });
    await peer.channel.close();
    await expect(pending).rejects.toMatchObject({ code: 'peer-eof' });
    expect(signal?.aborted).toBe(true);
  });

  it('starts closed over a channel that is already closed', async () => {
    const { near } = memoryPair();
    await near.close();
    const engine = new RequestEngine(near, { timeout: 1000 });
    expect(engine.closedReason?.code).toBe('closed');
    await expect(engine.request({ method: 'a', params: {}, phase: 'ping' })).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('RequestEngine: requests and notifications in', () => {
  it('answers a request with its handler, giving it the params and a per-request context', async () => {
    const { engine, peer } = setup();
    const contexts: { id: unknown; aborted: boolean }[] = [];
    engine.onRequest('sum', (params, ctx) => {
      contexts.push({ id: ctx.id, aborted: ctx.signal.aborted });
      const { a, b } = params as { a: number; b: number };
      return { sum: a + b };
    });
    engine.onRequest('nothing', () => undefined);
    peer.request('s1', 'sum', { a: 2, b: 3 });
    peer.request(7, 'nothing');
    expect((await peer.next((m) => m.id === 's1')).result).toEqual({ sum: 5 });
    expect((await peer.next((m) => m.id === 7)).result).toEqual({});
    expect(contexts).toEqual([{ id: 's1', aborted: false }]);
  });

  it('answers an unknown method with -32601, a plain throw with -32603, an McpError with its own rpc code', async () => {
    const { engine, peer } = setup();
    engine.onRequest('plain', () => {
      throw new Error('oops');
    });
    engine.onRequest('coded', async () => {
      throw new McpError('rpc-error', 'nope', { rpc: { code: -32602, message: 'bad params', data: { why: 1 } } });
    });
    peer.request(1, 'missing');
    peer.request(2, 'plain');
    peer.request(3, 'coded');
    expect((await peer.next((m) => m.id === 1)).error).toEqual({ code: -32601, message: 'Method not found: missing' });
    expect((await peer.next((m) => m.id === 2)).error).toEqual({ code: -32603, message: 'oops' });
    expect((await peer.next((m) => m.id === 3)).error).toEqual({ code: -32602, message: 'bad params', data: { why: 1 } });
  });

  it('aborts the handler of a request the peer cancels, and sends no answer to it', async () => {
    const { engine, peer } = setup();
    let reason: unknown;
    engine.onRequest('wait', (_params, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => ((reason = ctx.signal.reason), resolve({ late: true })), { once: true })));
    engine.onRequest('ping', () => ({}));
    peer.request('w', 'wait');
    await tick();
    peer.notify('notifications/cancelled', { requestId: 'w', reason: 'changed my mind' });
    // A later request's answer proves the cancelled one had its chance to answer, and did not.
    peer.request('p', 'ping');
    await peer.next((m) => m.id === 'p');
    await tick();
    expect(reason).toMatchObject({ code: 'cancelled' });
    expect(peer.received.filter((r) => r.message.id === 'w')).toEqual([]);
  });

  it('gives a handler the pending request its message relates to (and its scope), and answers on that relation', async () => {
    const { engine, peer } = setup();
    const seen: unknown[] = [];
    engine.onRequest('elicitation/create', (_params, ctx) => {
      seen.push({ relatedTo: ctx.relatedTo, scope: ctx.related?.scope, label: ctx.related?.label });
      return { action: 'decline' };
    });
    const call = engine.request({ method: 'tools/call', params: { name: 't' }, phase: 'tools/call', label: 'tools/call "t"', scope: { who: 'session 1' } });
    const sent = await peer.next('tools/call');
    peer.request('e1', 'elicitation/create', { message: 'hi' }, { relatedTo: sent.id });
    peer.request('e2', 'elicitation/create', { message: 'hi' });
    const answer1 = await peer.next((m) => m.id === 'e1');
    await peer.next((m) => m.id === 'e2');
    expect(answer1.result).toEqual({ action: 'decline' });
    expect(peer.received.find((r) => r.message.id === 'e1')?.context).toEqual({ relatedTo: sent.id });
    expect(peer.received.find((r) => r.message.id === 'e2')?.context).toEqual({});
    expect(seen).toEqual([
      { relatedTo: sent.id, scope: { who: 'session 1' }, label: 'tools/call "t"' },
      { relatedTo: undefined, scope: undefined, label: undefined },
    ]);
    peer.reply(sent.id, {});
    await call;
  });

  it('hands notifications to their handler with the context, isolating a throwing one', async () => {
    const { engine, peer } = setup();
    const got: unknown[] = [];
    engine.onNotification('notifications/message', (params, context) => got.push({ params, context }));
    engine.onNotification('notifications/bad', () => {
      throw new Error('listener bug');
    });
    peer.notify('notifications/bad', {});
    peer.notify('notifications/unknown', {});
    peer.notify('notifications/message', { level: 'info', data: 'x' }, { relatedTo: 4 });
    await tick();
    await tick();
    expect(got).toEqual([{ params: { level: 'info', data: 'x' }, context: { relatedTo: 4 } }]);
  });

  it('reports a message that is neither request, answer nor notification', async () => {
    const { engine, peer } = setup();
    const invalid: unknown[] = [];
    engine.onInvalid((m) => invalid.push(m));
    void peer.channel.send({ jsonrpc: '2.0', id: 5 } as never);
    await tick();
    await tick();
    expect(invalid).toEqual([{ jsonrpc: '2.0', id: 5 }]);
  });
});
