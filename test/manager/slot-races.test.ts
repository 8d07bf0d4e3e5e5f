import { McpServerManager } from '../../src/manager/manager.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { fixture, isAlive, textOf, waitFor } from '../support/fixtures.js';
// @ts-expect-error: a plain .mjs helper shared with the global teardown
import { serverProcesses } from '../support/leftover-processes.mjs';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(servers: Record<string, object>, options = {}): { manager: McpServerManager; states: string[]; starts: () => number } {
  const manager = McpServerManager.fromConfig({ mcpServers: servers }, options);
  managers.push(manager);
  const states: string[] = [];
  manager.on('stateChange', ({ server, from, to }: ManagerEvents['stateChange']) => states.push(`${server} ${from}>${to}`));
  return { manager, states, starts: () => states.filter((s) => s.endsWith('>starting')).length };
}

/** Live processes of this test run whose command line holds `marker`. */
function liveWith(marker: string): number[] {
  return (serverProcesses(process.pid) as { pid: number; cmd: string }[]).filter((p) => p.cmd.includes(marker)).map((p) => p.pid);
}

describe('restart() is single flight', () => {
  it('joins a start in flight instead of starting a second process', async () => {
    const { manager, starts } = manage({ slow: fixture('slow-init.mjs', '800') });
    const call = manager.callTool('mcp__slow__slow_hello');
    expect(await waitFor(() => manager.status().slow.state === 'starting')).toBe(true);
    await manager.restart('slow');
    expect(textOf(await call)).toBe('hello from slow');
    expect(starts()).toBe(1);
    expect(manager.status().slow).toMatchObject({ state: 'ready', restarts: 0 });
  });

  it('two concurrent restart()s of a running server make one new start', async () => {
    const { manager, starts } = manage({ echo: fixture('echo-server.mjs') });
    await manager.callTool('mcp__echo__echo', { text: 'up' });
    const pid = manager.status().echo.pid as number;
    await Promise.all([manager.restart('echo'), manager.restart('echo')]);
    expect(starts()).toBe(2);
    expect(manager.status().echo).toMatchObject({ state: 'ready', restarts: 1 });
    expect(manager.status().echo.pid).not.toBe(pid);
    expect(isAlive(pid)).toBe(false);
  });

  it('calls in flight on the old connection reject with unavailable, never closed', async () => {
    const { manager } = manage({ echo: fixture('echo-server.mjs') });
    await manager.callTool('mcp__echo__echo', { text: 'up' });
    let progressed = false;
    const pending = manager.callTool('mcp__echo__slow', { ms: 10_000, interval: 50 }, { onProgress: () => (progressed = true) }).catch((e) => e);
    // Once the server reports progress the call is surely in flight; restart under it.
    expect(await waitFor(() => progressed)).toBe(true);
    await manager.restart('echo');
    const error = await pending;
    expect(error).toMatchObject({ code: 'unavailable', server: 'echo' });
    expect(error.message).toContain('restarted');
    expect(error.cause).toMatchObject({ code: 'closed' });
    expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'again' }))).toBe('again');
  });
});

describe('restart() racing shutdown()', () => {
  it('leaves no live process once shutdown() resolved, and the slot never starts again', async () => {
    const marker = `race-${process.pid}-${Date.now()}`;
    const { manager } = manage({ echo: fixture('echo-server.mjs', marker) }, { shutdownGraceMs: 1000 });
    const pids: number[] = [];
    manager.on('stateChange', ({ to }) => {
      if (to === 'ready') pids.push(manager.status().echo.pid as number);
    });
    await manager.callTool('mcp__echo__echo', { text: 'up' });
    const restarted = manager.restart('echo').catch((e) => e);
    await manager.shutdown();
    expect(await restarted).toMatchObject({ code: 'closed' });
    expect(liveWith(marker)).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(manager.status().echo.state).toBe('closed');
    await expect(manager.callTool('mcp__echo__echo', { text: 'x' })).rejects.toMatchObject({ code: 'closed' });
    expect(liveWith(marker)).toEqual([]);
  });

  it('ends a restart caught in its start', async () => {
    const marker = `race-start-${process.pid}-${Date.now()}`;
    const { manager } = manage({ slow: fixture('slow-init.mjs', '600', 'slow', marker) }, { shutdownGraceMs: 500 });
    await manager.callServerTool('slow', 'slow_hello');
    const restarted = manager.restart('slow').catch((e) => e);
    expect(await waitFor(() => manager.status().slow.state === 'starting')).toBe(true);
    await manager.shutdown();
    expect(liveWith(marker)).toEqual([]);
    expect(await restarted).toMatchObject({ code: 'closed' });
    expect(liveWith(marker)).toEqual([]);
  });
});

describe('idle stop racing a call', () => {
  it('a call arriving as the idle stop begins waits for the old process to be gone, then starts a new one', async () => {
    const { manager } = manage({ echo: { ...fixture('echo-server.mjs'), idleTimeout: 200 } });
    await manager.callTool('mcp__echo__echo', { text: 'a' });
    const oldPid = manager.status().echo.pid as number;
    let raced: Promise<unknown> | undefined;
    let oldAliveAtStart: boolean | undefined;
    manager.on('stateChange', ({ from, to }) => {
      if (from === 'ready' && to === 'stopped' && !raced) raced = manager.callTool('mcp__echo__echo', { text: 'b' });
      if (to === 'starting' && raced && oldAliveAtStart === undefined) oldAliveAtStart = isAlive(oldPid);
    });
    expect(await waitFor(() => raced !== undefined, 5000)).toBe(true);
    expect(textOf((await raced) as { content: unknown[] })).toBe('b');
    expect(oldAliveAtStart).toBe(false);
    expect(manager.status().echo).toMatchObject({ state: 'ready', restarts: 1 });
  });
});

describe('session.close() racing a start', () => {
  it('cancels only that session\'s wait; the start goes on for the others', async () => {
    const { manager, starts } = manage({ slow: fixture('slow-init.mjs', '800') });
    const leaving = manager.session();
    const staying = manager.session();
    const left = leaving.callTool('mcp__slow__slow_hello').catch((e) => e);
    const kept = staying.callTool('mcp__slow__slow_hello');
    expect(await waitFor(() => manager.status().slow.state === 'starting')).toBe(true);
    leaving.close();
    expect(await left).toMatchObject({ code: 'closed' });
    expect(textOf(await kept)).toBe('hello from slow');
    expect(starts()).toBe(1);
    expect(manager.status().slow).toMatchObject({ state: 'ready', restarts: 0 });
  });
});
