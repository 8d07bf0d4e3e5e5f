import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { McpServerManager } from '../../src/manager/manager.js';
import type { ToolSession } from '../../src/manager/scope/session.js';
import { fixture, textOf } from '../support/fixtures.js';

/** The engine's full collection, without running the whole test process under --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}


describe('sessions', () => {
  let manager: McpServerManager;
  beforeEach(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs') } });
  });
  afterEach(() => manager.shutdown());

  it('share one process per server across sessions', async () => {
    const one = manager.session();
    const two = manager.session();
    await Promise.all([one.callTool('mcp__a__echo', { text: '1' }), two.callTool('mcp__a__echo', { text: '2' })]);
    const starts = manager.status().a.restarts;
    expect(starts).toBe(0);
    expect(manager.status().a.state).toBe('ready');
  });

  it('see only their own servers', async () => {
    const onlyB = manager.session({ servers: ['b'] });
    expect(new Set((await onlyB.listTools()).map((t) => t.server))).toEqual(new Set(['b']));
    // A tool of the pool outside the session's view is named as such, not as a typo.
    await expect(onlyB.callTool('mcp__a__echo', { text: 'x' })).rejects.toMatchObject({
      code: 'unknown-tool',
      message: 'tool "mcp__a__echo" is not available in this session: its server "a" is not among the session\'s servers (b)',
    });
    await expect(onlyB.callServerTool('a', 'echo')).rejects.toMatchObject({ code: 'unknown-server', message: 'server "a" is not available in this session (its servers: b)' });
    await expect(onlyB.readResource('a', 'mem://greeting')).rejects.toMatchObject({ code: 'unknown-server' });
    expect(textOf(await onlyB.callTool('mcp__b__echo', { text: 'ok' }))).toBe('ok');
    expect((await onlyB.listResources()).map((r) => `${r.server} ${r.resource.uri}`)).toEqual(['b mem://greeting', 'b mem://farewell']);
    expect(manager.status().a.state).toBe('idle');
    expect(() => manager.session({ servers: ['nope'] })).toThrow(expect.objectContaining({ code: 'unknown-server' }));
  });

  it("say a tool their tools filter leaves out is not available in this session", async () => {
    const noAdd = manager.session({ tools: { deny: ['add'] } });
    await expect(noAdd.callTool('mcp__a__add', { a: 1, b: 2 })).rejects.toMatchObject({
      code: 'unknown-tool',
      message: 'server "a": tool "mcp__a__add" is not available in this session (its tools filter leaves it out)',
    });
  });

  it('hint the public name when given a tool\'s own name', async () => {
    await manager.listTools();
    await expect(manager.callTool('add', { a: 1, b: 2 })).rejects.toMatchObject({ code: 'unknown-tool', message: expect.stringContaining('did you mean mcp__a__add, mcp__b__add?') });
    const onlyB = manager.session({ servers: ['b'] });
    await expect(onlyB.callTool('echo')).rejects.toMatchObject({ code: 'unknown-tool', message: expect.stringMatching(/did you mean mcp__b__echo(,|\?)/) });
  });

  it('close() cancels that session\'s calls in flight only; the processes stay for the others', async () => {
    const leaving = manager.session();
    const staying = manager.session();
    const cancelled = leaving.callTool('mcp__a__slow', { ms: 10_000 }).catch((e) => e);
    const kept = staying.callTool('mcp__a__slow', { ms: 300 });
    await manager.callTool('mcp__a__echo', { text: 'warm' });
    const pid = manager.status().a.pid;
    leaving.close();
    leaving.close();
    const error = await cancelled;
    expect(error.code).toBe('closed');
    expect(error.message).toContain('the session was closed');
    expect(textOf(await kept)).toBe('done');
    expect(manager.status().a.pid).toBe(pid);
    await expect(leaving.callTool('mcp__a__echo')).rejects.toMatchObject({ code: 'closed' });
    await expect(leaving.listTools()).rejects.toMatchObject({ code: 'closed' });
    // The server was told, so it stops the work of the closed session.
    const cancellations = JSON.parse(textOf(await staying.callTool('mcp__a__cancellations')));
    expect(cancellations).toHaveLength(1);
  });

  it('a caller\'s own signal still cancels its call within a session', async () => {
    const session = manager.session();
    const controller = new AbortController();
    const call = session.callTool('mcp__b__slow', { ms: 10_000 }, { signal: controller.signal }).catch((e) => e);
    controller.abort();
    expect((await call).code).toBe('cancelled');
  });

  it('are closed by shutdown', async () => {
    const session = manager.session();
    const call = session.callTool('mcp__a__slow', { ms: 10_000 }).catch((e) => e);
    await manager.shutdown();
    expect((await call).code).toBe('closed');
    await expect(session.callTool('mcp__a__echo')).rejects.toMatchObject({ code: 'closed' });
    expect(() => manager.session()).toThrow(expect.objectContaining({ code: 'closed' }));
  });
});

describe('session calls sharing one caller signal', () => {
  let manager: McpServerManager;
  beforeEach(() => {
    manager = McpServerManager.fromConfig({ mcpServers: { a: fixture('echo-server.mjs') } });
  });
  afterEach(() => manager.shutdown());

  it('add one listener to it however many are in flight, and all end when it aborts', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const session = manager.session();
      const shared = new AbortController();
      const ok = await Promise.all(Array.from({ length: 20 }, (_, i) => session.callTool('mcp__a__echo', { text: String(i) }, { signal: shared.signal })));
      expect(ok).toHaveLength(20);
      const slow = Array.from({ length: 20 }, () => session.callTool('mcp__a__slow', { ms: 20_000 }, { signal: shared.signal }));
      await new Promise((r) => setTimeout(r, 50));
      shared.abort();
      const settled = await Promise.allSettled(slow);
      expect(settled.every((s) => s.status === 'rejected' && (s.reason as { code: string }).code === 'cancelled')).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      session.close();
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a session its host forgets without closing costs nothing once collected, even after it made calls', async () => {
    const gc = collector();
    await manager.callTool('mcp__a__echo', { text: 'warm' });
    const sessions: WeakRef<ToolSession>[] = [];
    const signals: WeakRef<AbortSignal>[] = [];
    await (async () => {
      for (let i = 0; i < 200; i++) {
        const session = manager.session();
        // Its calls leave its signal known to the server's connection (see PendingRequests' lasting signals).
        expect(textOf(await session.callTool('mcp__a__echo', { text: String(i) }))).toBe(String(i));
        sessions.push(new WeakRef(session));
        signals.push(new WeakRef((session as unknown as { shared: AbortController }).shared.signal));
      }
    })();
    // A WeakRef made or read in this job keeps its target until the job ends.
    const deadline = Date.now() + 10_000;
    let held = sessions.length;
    while (held > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      held = sessions.filter((ref) => ref.deref() !== undefined).length + signals.filter((ref) => ref.deref() !== undefined).length;
    }
    expect(held).toBe(0);
    // A session still held is closed by the shutdown, as before.
    const kept = manager.session();
    await manager.shutdown();
    await expect(kept.callTool('mcp__a__echo', { text: 'x' })).rejects.toMatchObject({ code: 'closed' });
  });
});
