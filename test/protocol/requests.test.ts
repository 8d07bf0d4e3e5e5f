import { McpClient } from '../../src/protocol/client.js';
import type { Progress } from '../../src/protocol/types.js';
import { connect } from '../support/clients.js';
import { fixture, textOf } from '../support/fixtures.js';


describe('typed requests', () => {
  let echo: McpClient;
  beforeEach(async () => {
    echo = await connect(fixture('echo-server.mjs'), { name: 'echo' });
  });

  it('lists tools with their own definitions', async () => {
    const tools = await echo.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'add', 'fail', 'slow']));
    expect(tools.find((t) => t.name === 'echo')).toMatchObject({ description: 'Echo the text back\nSecond line.', inputSchema: { type: 'object' } });
  });

  it('calls a tool and returns content and structuredContent', async () => {
    expect(textOf(await echo.callTool('echo', { text: 'héllo ✓' }))).toBe('héllo ✓');
    const sum = await echo.callTool('add', { a: 2, b: 3 });
    expect(sum.structuredContent).toEqual({ sum: 5 });
  });

  it('returns a tool failure (isError) as a result, not an exception', async () => {
    const result = await echo.callTool('fail', { why: 'disk full' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('disk full');
  });

  it('turns a JSON-RPC error answer into rpc-error with the server code, message and data', async () => {
    const error = await echo.callTool('no_such_tool').catch((e) => e);
    expect(error.code).toBe('rpc-error');
    expect(error.phase).toBe('tools/call');
    expect(error.rpc).toMatchObject({ code: -32602, message: 'Unknown tool: no_such_tool' });
    expect(error.message).toBe('server "echo": tools/call "no_such_tool" failed: Unknown tool: no_such_tool (JSON-RPC error -32602)');
  });

  it('lists and reads resources and templates', async () => {
    const resources = await echo.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['mem://greeting', 'mem://farewell']);
    expect(resources[0]).toMatchObject({ name: 'greeting', mimeType: 'text/plain' });
    expect(await echo.listResourceTemplates()).toEqual([{ uriTemplate: 'mem://{name}', name: 'memory' }]);
    const read = await echo.readResource('mem://greeting');
    expect(read.contents).toEqual([{ uri: 'mem://greeting', mimeType: 'text/plain', text: 'hello' }]);
  });

  it('pings the server, and answers the server ping', async () => {
    await expect(echo.ping()).resolves.toBeUndefined();
    const answer = await echo.callTool('ask_client', { method: 'ping' });
    expect(JSON.parse(textOf(answer)).result).toEqual({});
  });

  it('answers an unsupported server request with -32601 while a call of ours is in flight', async () => {
    const slow = echo.callTool('slow', { ms: 300 });
    const answer = await echo.callTool('ask_client', { method: 'sampling/createMessage', params: { messages: [] } });
    expect(JSON.parse(textOf(answer)).error.code).toBe(-32601);
    expect(textOf(await slow)).toBe('done');
  });

  it('delivers progress to onProgress in order, before the result', async () => {
    const seen: Progress[] = [];
    const result = await echo.callTool('slow', { ms: 150, interval: 50 }, { onProgress: (p) => seen.push(p) });
    expect(textOf(result)).toBe('done');
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('lets progress keep a long call alive past its timeout, unless maxTotalTimeout caps it', async () => {
    // Progress every 50 ms against a 600 ms timeout: generous for a loaded machine.
    const kept = await echo.callTool('slow', { ms: 1500, interval: 50 }, { timeout: 600 });
    expect(textOf(kept)).toBe('done');

    const noReset = await echo.callTool('slow', { ms: 1500, interval: 50 }, { timeout: 600, resetTimeoutOnProgress: false }).catch((e) => e);
    expect(noReset.code).toBe('timeout');

    const capped = await echo.callTool('slow', { ms: 5000, interval: 50 }, { timeout: 600, maxTotalTimeout: 900 }).catch((e) => e);
    expect(capped.code).toBe('timeout');
    expect(capped.message).toContain('timed out after 900 ms in total');
  });

  it('on timeout rejects with timeout, tells the server with notifications/cancelled, and stays usable', async () => {
    const error = await echo.callTool('slow', { ms: 5000 }, { timeout: 100 }).catch((e) => e);
    expect(error.code).toBe('timeout');
    expect(error.phase).toBe('tools/call');
    expect(error.message).toBe('server "echo": tools/call "slow" timed out after 100 ms; the request was cancelled');
    const cancellations = JSON.parse(textOf(await echo.callTool('cancellations')));
    expect(cancellations).toHaveLength(1);
    expect(typeof cancellations[0].requestId).toBe('number');
    expect(cancellations[0].reason).toContain('timed out');
    expect(textOf(await echo.callTool('echo', { text: 'still here' }))).toBe('still here');
    expect(echo.inFlight).toBe(0);
  });

  it('on abort rejects with cancelled and sends notifications/cancelled', async () => {
    const controller = new AbortController();
    const call = echo.callTool('slow', { ms: 5000 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user pressed stop')), 50);
    const error = await call.catch((e) => e);
    expect(error.code).toBe('cancelled');
    expect(error.cause).toEqual(new Error('user pressed stop'));
    const cancellations = JSON.parse(textOf(await echo.callTool('cancellations')));
    expect(cancellations).toHaveLength(1);
    // An already-aborted signal never reaches the server.
    const again = await echo.callTool('echo', { text: 'x' }, { signal: controller.signal }).catch((e) => e);
    expect(again.code).toBe('cancelled');
    expect(JSON.parse(textOf(await echo.callTool('cancellations')))).toHaveLength(1);
  });

  it('emits server log messages and list_changed notifications', async () => {
    const logs: unknown[] = [];
    let changed = 0;
    echo.on('log', (m) => logs.push(m));
    echo.on('toolsChanged', () => changed++);
    await echo.callTool('log', { level: 'warning', data: { disk: 'low' } });
    await echo.callTool('tools_changed');
    expect(logs).toEqual([{ level: 'warning', logger: 'echo', data: { disk: 'low' } }]);
    expect(changed).toBe(1);
  });

  it('fails only the call whose arguments are not JSON, and keeps the others and the server', async () => {
    const slow = echo.callTool('slow', { ms: 300 });
    const error = await echo.callTool('echo', { text: 1n as unknown as string }).catch((e) => e);
    expect(error).toMatchObject({ code: 'protocol-error', phase: 'tools/call' });
    expect(error.message).toContain('server "echo": tools/call "echo" was not sent: cannot send a message that is not JSON');
    expect(textOf(await slow)).toBe('done');
    expect(echo.isOpen).toBe(true);
  });

  it('rejects a timeout option that is not a duration, without sending', async () => {
    await expect(echo.callTool('echo', { text: 'x' }, { timeout: Number.NaN })).rejects.toMatchObject({
      code: 'invalid-config',
      message: 'the option `timeout` must be a non-negative number of milliseconds, got NaN (number)',
    });
    await expect(echo.callTool('echo', { text: 'x' }, { maxTotalTimeout: -1 })).rejects.toMatchObject({ code: 'invalid-config' });
    expect(echo.inFlight).toBe(0);
  });

  it('matches 5000 concurrent calls each to its own answer', async () => {
    const texts = Array.from({ length: 5000 }, (_, i) => `call-${i}`);
    const results = await Promise.all(texts.map((text) => echo.callTool('echo', { text })));
    expect(results.map(textOf)).toEqual(texts);
    expect(echo.inFlight).toBe(0);
  });
});

describe('pagination', () => {
  it('follows nextCursor over several pages', async () => {
    const client = await connect(fixture('paginated-tools.mjs', '25', '10'));
    const tools = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(Array.from({ length: 25 }, (_, i) => `tool_${i}`));
  });

  it('stops a repeated cursor with protocol-error', async () => {
    const client = await connect(fixture('runaway-cursor.mjs', 'repeat'), { name: 'loop' });
    const error = await client.listTools().catch((e) => e);
    expect(error.code).toBe('protocol-error');
    expect(error.message).toBe('server "loop": tools/list repeated the cursor "again"; the server\'s pagination is broken');
  });

  it('stops a cursor that never ends at the page cap', async () => {
    const client = await connect(fixture('runaway-cursor.mjs'), { name: 'endless' });
    const error = await client.listTools().catch((e) => e);
    expect(error.code).toBe('protocol-error');
    expect(error.message).toContain('did not end after 1000 pages');
  });
});

describe('validation of results', () => {
  let bad: McpClient;
  beforeEach(async () => {
    bad = await connect(fixture('malformed-results.mjs'), { name: 'bad' });
  });

  it.each([
    ['tools/list', () => bad.listTools(), 'tools.1.name'],
    ['tools/call', () => bad.callTool('x'), 'content.0'],
    ['resources/list', () => bad.listResources(), 'resources'],
    ['resources/read', () => bad.readResource('mem://x'), 'contents.0'],
  ])('rejects a malformed %s result with protocol-error naming the field', async (method, call, field) => {
    const error = (await call().catch((e: Error) => e)) as Error;
    expect(error).toMatchObject({ code: 'protocol-error', phase: method });
    expect(error.message).toContain(`server "bad": invalid ${method} result: ${field}`);
  });
});

describe('framing and noise', () => {
  it('speaks Content-Length framing when configured', async () => {
    const client = await connect({ ...fixture('content-length-server.mjs'), framing: 'content-length' });
    expect(textOf(await client.callTool('echo', { text: 'framed ✓' }))).toBe('framed ✓');
  });

  it('skips stray stdout lines, reports them, and keeps the connection', async () => {
    const noise: string[] = [];
    const client = await connect(fixture('noisy-stdout.mjs'), { listeners: { noise: (line) => noise.push(line) } });
    expect(textOf(await client.callTool('echo', { text: 'hi' }))).toBe('hi');
    expect(noise).toEqual(['Server starting on stdio...', 'debug: echo called with {"text":"hi"}']);
  });

  it('closes the connection with protocol-error on a message over maxMessageBytes', async () => {
    const client = await connect(fixture('huge-message.mjs', '200000'), { name: 'huge', maxMessageBytes: 100_000 });
    expect(textOf(await client.callTool('small'))).toBe('fine');
    const error = await client.callTool('huge').catch((e) => e);
    expect(error.code).toBe('protocol-error');
    expect(error.message).toContain('server "huge"');
    expect(client.isOpen).toBe(false);
  });
});
