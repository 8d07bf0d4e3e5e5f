import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { backoffDelay } from '../../src/manager/pool/slot-state.js';
import { tempDir } from '../support/temp-dirs.js';
import { managersShutAfterEach } from '../support/managers.js';
import { fixture, isAlive, waitFor, textOf } from '../support/fixtures.js';

const manage = managersShutAfterEach();

describe('crashes', () => {
  it('fails the calls on a server that crashes mid-call, then starts it again on next use', async () => {
    const manager = manage({ echo: fixture('echo-server.mjs') });
    const exits: ManagerEvents['exit'][] = [];
    manager.on('exit', (e) => exits.push(e));
    const pending = manager.callTool('mcp__echo__slow', { ms: 10_000 }).catch((e) => e);
    const crash = await manager.callTool('mcp__echo__crash').catch((e) => e);
    expect(crash).toMatchObject({ code: 'peer-exited', server: 'echo', phase: 'tools/call', exitCode: 3, stderrTail: ['about to crash'] });
    expect((await pending).code).toBe('peer-exited');
    expect(manager.status().echo).toMatchObject({ state: 'stopped', lastError: { code: 'peer-exited' } });
    expect(exits).toEqual([expect.objectContaining({ server: 'echo', exitCode: 3, error: expect.objectContaining({ code: 'peer-exited' }) })]);

    expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'back' }))).toBe('back');
    expect(manager.status().echo).toMatchObject({ state: 'ready', restarts: 1 });
  });

  it('emits exit with the status for a server that dies while starting', async () => {
    const manager = manage({ db: fixture('exits-at-once.mjs') });
    const exits: ManagerEvents['exit'][] = [];
    manager.on('exit', (e) => exits.push(e));
    await expect(manager.callServerTool('db', 'x')).rejects.toMatchObject({ code: 'peer-exited' });
    expect(await waitFor(() => exits.length === 1)).toBe(true);
    expect(exits[0]).toMatchObject({ server: 'db', exitCode: 1, error: { code: 'peer-exited' } });
  });

  it('lets a caller abort its wait for a slow start without stopping the start', async () => {
    const manager = manage({ slow: fixture('slow-init.mjs', '1500') });
    const controller = new AbortController();
    const started = Date.now();
    const call = manager.callTool('mcp__slow__slow_hello', {}, { signal: controller.signal }).catch((e) => e);
    await waitFor(() => manager.status().slow.state === 'starting');
    controller.abort();
    const error = await call;
    expect(error.code).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(1500);
    // The start goes on for everyone else.
    expect(textOf(await manager.callTool('mcp__slow__slow_hello'))).toBe('hello from slow');
    expect(manager.status().slow.restarts).toBe(0);
  });

  it('never retries a tools/call on its own', async () => {
    const manager = manage({ echo: fixture('echo-server.mjs') });
    const starts: string[] = [];
    manager.on('stateChange', ({ to }) => to === 'starting' && starts.push(to));
    await expect(manager.callTool('mcp__echo__crash')).rejects.toMatchObject({ code: 'peer-exited' });
    expect(starts).toHaveLength(1);
  });
});

describe('oversized messages', () => {
  it('close the connection and process with protocol-error; the next use starts the server again', async () => {
    const manager = manage({ huge: fixture('huge-message.mjs', '300000') }, { maxMessageBytes: 100_000 });
    expect(textOf(await manager.callTool('mcp__huge__small'))).toBe('fine');
    const pid = manager.status().huge.pid as number;
    const error = await manager.callTool('mcp__huge__huge').catch((e) => e);
    expect(error).toMatchObject({ code: 'protocol-error', server: 'huge' });
    expect(error.message).toContain('100000 bytes');
    expect(await waitFor(() => !isAlive(pid), 4000)).toBe(true);
    expect(textOf(await manager.callTool('mcp__huge__small'))).toBe('fine');
    expect(manager.status().huge).toMatchObject({ state: 'ready', restarts: 1 });
  });
});

describe('backoff after failed starts', () => {
  it('backs off 250 ms doubling, fails fast meanwhile, and is failed after 5 in a row until restart()', async () => {
    const flag = join(tempDir('lazy-mcp-flaky-'), 'ready');
    const manager = manage({ flaky: fixture('flaky-start.mjs', flag) });
    const waits: number[] = [];
    let backoffAt = 0;
    manager.on('stateChange', ({ from, to }) => {
      if (to === 'backoff') backoffAt = Date.now();
      if (from === 'backoff' && to === 'starting') waits.push(Date.now() - backoffAt);
    });
    const call = () => manager.callServerTool('flaky', 'echo').catch((e) => e);

    let error = await call();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect(error).toMatchObject({ code: 'peer-exited', phase: 'initialize', exitCode: 2 });
      if (attempt === 5) break;
      expect(manager.status().flaky.state).toBe('backoff');
      // Calls fail fast through the wait, the state staying backoff; the first call after it starts the server again.
      const deadline = Date.now() + 10_000;
      let next = await call();
      while (next.code === 'unavailable' && Date.now() < deadline) {
        expect(next.cause).toBe(error);
        expect(next.message).toContain('backing off');
        expect(manager.status().flaky.state).toBe('backoff');
        await new Promise((r) => setTimeout(r, 10));
        next = await call();
      }
      error = next;
    }
    expect(manager.status().flaky).toMatchObject({ state: 'failed', lastError: { code: 'peer-exited' } });
    expect(waits).toHaveLength(4);
    waits.forEach((wait, i) => expect(wait).toBeGreaterThanOrEqual(250 * 2 ** i - 20));
    const failed = await call();
    expect(failed.code).toBe('unavailable');
    expect(failed.message).toContain('call restart("flaky")');

    await expect(manager.restart('flaky')).rejects.toMatchObject({ code: 'peer-exited' });
    expect(manager.status().flaky.state).toBe('backoff');
    writeFileSync(flag, '');
    await manager.restart('flaky');
    expect(manager.status().flaky.state).toBe('ready');
    expect(textOf(await manager.callServerTool('flaky', 'echo', { text: 'up' }))).toBe('up');
  });

  it('shows one state for one situation: a server whose only start failed stays backoff after the wait', async () => {
    const manager = manage({ broken: fixture('exits-at-once.mjs'), mute: { ...fixture('never-initializes.mjs'), timeout: 300 } }, { shutdownGraceMs: 200 });
    await manager.listTools();
    expect(manager.status().broken).toMatchObject({ state: 'backoff', lastError: { code: 'peer-exited' } });
    expect(manager.status().mute).toMatchObject({ state: 'backoff', lastError: { code: 'timeout', phase: 'initialize' } });
    // Well past the first 250 ms wait, nothing has changed what the servers are.
    expect(await waitFor(() => manager.status().broken.state !== 'backoff' || manager.status().mute.state !== 'backoff', 800)).toBe(false);
    // And the next use starts it again (it fails again, so it backs off again).
    const starts: string[] = [];
    manager.on('stateChange', ({ server, from, to }) => starts.push(`${server} ${from}>${to}`));
    await expect(manager.callServerTool('broken', 'x')).rejects.toMatchObject({ code: 'peer-exited' });
    expect(starts).toEqual(['broken backoff>starting', 'broken starting>backoff']);
  });

  it('does not count the crash of a running server as a failed start', async () => {
    const manager = manage({ echo: fixture('echo-server.mjs') });
    const states: string[] = [];
    manager.on('stateChange', ({ to }) => states.push(to));
    for (let i = 0; i < 6; i++) {
      await expect(manager.callTool('mcp__echo__crash')).rejects.toMatchObject({ code: 'peer-exited' });
      expect(manager.status().echo.state).toBe('stopped');
    }
    expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'still here' }))).toBe('still here');
    expect(states).not.toContain('backoff');
    expect(manager.status().echo).toMatchObject({ state: 'ready', restarts: 6 });
  });

  it('waits 250 ms doubling per failure, capped at 30 s', () => {
    expect([1, 2, 3, 4, 5, 8, 20].map(backoffDelay)).toEqual([250, 500, 1000, 2000, 4000, 30_000, 30_000]);
  });
});

describe('idle stop', () => {
  it('stops a server with nothing in flight for idleTimeout and starts it again on next use', async () => {
    const manager = manage({ echo: { ...fixture('echo-server.mjs'), idleTimeout: 300 } });
    await manager.callTool('mcp__echo__echo', { text: 'a' });
    const pid = manager.status().echo.pid as number;
    // A call longer than the idle timeout keeps it alive, and so does its progress.
    await manager.callTool('mcp__echo__slow', { ms: 700, interval: 100 });
    expect(manager.status().echo.pid).toBe(pid);
    expect(await waitFor(() => manager.status().echo.state === 'stopped', 5000)).toBe(true);
    expect(await waitFor(() => !isAlive(pid), 3000)).toBe(true);
    expect(textOf(await manager.callTool('mcp__echo__echo', { text: 'b' }))).toBe('b');
    expect(manager.status().echo).toMatchObject({ state: 'ready', restarts: 1 });
    expect(manager.status().echo.pid).not.toBe(pid);
  });
});

describe('shutdown', () => {
  it('closes every server in parallel, rejects pending and later calls with closed, and leaves no process', async () => {
    const manager = manage({ a: fixture('echo-server.mjs'), b: fixture('echo-server.mjs'), idle: fixture('echo-server.mjs') }, { shutdownGraceMs: 1000 });
    await manager.listTools({ servers: ['a', 'b'] });
    const pids = [manager.status().a.pid, manager.status().b.pid] as number[];
    const pending = manager.callTool('mcp__a__slow', { ms: 10_000 }).catch((e) => e);
    const started = Date.now();
    await Promise.all([manager.shutdown(), manager.shutdown()]);
    expect(Date.now() - started).toBeLessThan(2000 + 500);
    expect((await pending).code).toBe('closed');
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(Object.values(manager.status()).map((s) => s.state)).toEqual(['closed', 'closed', 'closed']);
    await expect(manager.callTool('mcp__a__echo')).rejects.toMatchObject({ code: 'closed' });
    await expect(manager.listTools()).rejects.toMatchObject({ code: 'closed' });
    await expect(manager.restart('a')).rejects.toMatchObject({ code: 'closed' });
    await expect(manager.shutdown()).resolves.toBeUndefined();
  });

  it('ends a start in progress too', async () => {
    const manager = manage({ slow: fixture('slow-init.mjs', '5000') }, { shutdownGraceMs: 500 });
    const call = manager.callServerTool('slow', 'slow_hello').catch((e) => e);
    await waitFor(() => manager.status().slow.state === 'starting');
    await manager.shutdown();
    expect((await call).code).toBe('closed');
  });

  it('works with await using', async () => {
    let pid = 0;
    {
      await using manager = McpServerManager.fromConfig({ mcpServers: { echo: fixture('echo-server.mjs') } });
      await manager.callTool('mcp__echo__echo', { text: 'x' });
      pid = manager.status().echo.pid as number;
    }
    expect(isAlive(pid)).toBe(false);
  });
});

describe('events', () => {
  it('emits stderr, log, toolsChanged and stateChange with the server name', async () => {
    const manager = manage({ echo: fixture('echo-server.mjs'), crashy: fixture('echo-server.mjs') });
    const events: unknown[] = [];
    manager.on('stderr', (e) => events.push(['stderr', e]));
    manager.on('log', (e) => events.push(['log', e]));
    manager.on('toolsChanged', (e) => events.push(['toolsChanged', e]));
    await manager.callTool('mcp__echo__log', { level: 'error', data: 'disk full' });
    await manager.callTool('mcp__echo__tools_changed');
    await manager.callTool('mcp__crashy__crash').catch(() => undefined);
    expect(events).toEqual(
      expect.arrayContaining([
        ['log', { server: 'echo', level: 'error', logger: 'echo', data: 'disk full' }],
        ['toolsChanged', { server: 'echo' }],
        ['stderr', { server: 'crashy', line: 'about to crash' }],
      ]),
    );
    // After list_changed the tools are listed again from the running server.
    expect((await manager.listTools({ servers: ['echo'] })).length).toBe(12);
    expect(manager.status().echo.restarts).toBe(0);
  });

  it('reports stray stdout lines as log events and keeps working', async () => {
    const manager = manage({ noisy: fixture('noisy-stdout.mjs') });
    const logs: ManagerEvents['log'][] = [];
    manager.on('log', (e) => logs.push(e));
    expect(textOf(await manager.callTool('mcp__noisy__echo', { text: 'hi' }))).toBe('hi');
    expect(logs.map((l) => l.logger)).toEqual(['stdout', 'stdout']);
    expect(String(logs[0].data)).toContain('Server starting on stdio...');
  });
});

describe('a server that dies during the start', () => {
  it('dying on the start’s prompts/list is a failed start, never ready on a dead connection; the next start serves', async () => {
    const marker = join(tempDir('lazy-mcp-dies-listing-'), 'died');
    const manager = manage({ dies: fixture('dies-listing-prompts.mjs', marker) });
    const states: string[] = [];
    manager.on('stateChange', ({ from, to }) => states.push(`${from}>${to}`));
    const error = await manager.callServerTool('dies', 'echo', { text: 'x' }).catch((e) => e);
    expect(error).toMatchObject({ code: 'peer-exited', server: 'dies', exitCode: 3 });
    expect(states).toEqual(['idle>starting', 'starting>backoff']);
    expect(manager.status().dies).toMatchObject({ state: 'backoff', lastError: { code: 'peer-exited' } });
    // After the backoff wait the next use starts it again; this time it stays up.
    const deadline = Date.now() + 10_000;
    let result = await manager.callServerTool('dies', 'echo', { text: 'again' }).catch((e) => e);
    while (result?.code === 'unavailable' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      result = await manager.callServerTool('dies', 'echo', { text: 'again' }).catch((e) => e);
    }
    expect(textOf(result)).toBe('again');
    expect(manager.status().dies.state).toBe('ready');
  });
});
