import type { ManagerEvents } from '../../src/manager/manager.js';
import { managersShutAfterEach } from '../support/managers.js';
import { fixture, isAlive, textOf, waitFor } from '../support/fixtures.js';

const manage = managersShutAfterEach();

const echo = fixture('echo-server.mjs');
const echoV2 = { ...echo, env: { ECHO_VERSION: '2.0.0' } };

describe('reload', () => {
  it('keeps unchanged servers, drains changed and removed ones, and adds idle ones, with calls in flight on each', async () => {
    const manager = manage({ same: echo, changed: echo, removed: echo });
    const events: ManagerEvents['configChanged'][] = [];
    manager.on('configChanged', (e) => events.push(e));
    for (const server of ['same', 'changed', 'removed']) await manager.callServerTool(server, 'echo', { text: 'hi' });
    const pids = Object.fromEntries(Object.entries(manager.status()).map(([name, s]) => [name, s.pid as number]));

    const slow = ['same', 'changed', 'removed'].map((server) => manager.callServerTool(server, 'slow', { ms: 1000 }));
    expect(await waitFor(() => Object.values(manager.metrics()).every((m) => m.inFlight === 1))).toBe(true);

    const report = await manager.reload({ mcpServers: { same: echo, changed: echoV2, added: echo } });
    expect(report).toEqual({ added: ['added'], removed: ['removed'], changed: ['changed'], unchanged: ['same'] });
    expect(events).toEqual([report]);
    expect(Object.keys(manager.status())).toEqual(['same', 'changed', 'added']);
    expect(manager.status().added.state).toBe('idle');
    expect(manager.status().same).toMatchObject({ state: 'ready', pid: pids.same });

    // The removed server's tools left the index; calls to it find no server.
    await expect(manager.callTool('mcp__removed__echo', { text: 'x' })).rejects.toMatchObject({ code: 'unknown-server' });
    await expect(manager.callServerTool('removed', 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'unknown-server' });

    // A call to the changed server waits for the old process to finish its call and stop.
    const onNew = manager.callTool('mcp__changed__echo', { text: 'new' });

    const results = await Promise.all(slow);
    expect(results.map(textOf)).toEqual(['done', 'done', 'done']);
    expect(textOf(await onNew)).toBe('new');
    const info = await manager.callServerTool('changed', 'env', { name: 'ECHO_VERSION' });
    expect(textOf(info)).toBe('2.0.0');

    expect(await waitFor(() => !isAlive(pids.changed) && !isAlive(pids.removed))).toBe(true);
    expect(isAlive(pids.same)).toBe(true);
    expect(manager.status().changed.pid).not.toBe(pids.changed);
    expect(manager.status().changed.restarts).toBe(1);
    expect(manager.metrics().changed).toMatchObject({ starts: 2, restarts: 1, inFlight: 0 });
    expect(manager.metrics().same).toMatchObject({ starts: 1, restarts: 0 });
    expect(manager.metrics().removed).toBeUndefined();
    expect((await manager.listTools()).map((t) => t.server).sort()).toEqual(expect.arrayContaining(['added', 'changed', 'same']));
    expect((await manager.listTools()).some((t) => t.server === 'removed')).toBe(false);
  });

  it('serves callers that wait for a start the reload overtakes, and starts the new entry once', async () => {
    const slow = fixture('slow-init.mjs', '800');
    const manager = manage({ slow });
    // One caller by public name (routing waits for the start), one by server (the call waits for it).
    const byName = manager.callTool('mcp__slow__slow_hello');
    const byServer = manager.callServerTool('slow', 'slow_hello');
    expect(await waitFor(() => manager.status().slow.state === 'starting')).toBe(true);
    const report = await manager.reload({ mcpServers: { slow: { ...slow, env: { CHANGED: '1' } } } });
    expect(report.changed).toEqual(['slow']);
    expect(manager.status().slow.state).toBe('idle');
    expect((await Promise.all([byName, byServer])).map(textOf)).toEqual(['hello from slow', 'hello from slow']);
    // The old entry's start, then the new one's: one restart.
    expect(manager.metrics().slow).toMatchObject({ starts: 2, restarts: 1, inFlight: 0 });
    expect(manager.status().slow.state).toBe('ready');
  });

  it('renames the tools of a kept server whose public name an added server now collides with', async () => {
    const manager = manage({ 'a.b': echo });
    const before = (await manager.listTools()).find((t) => t.tool.name === 'echo')!.name;
    expect(before).toBe('mcp__a_b__echo');
    const pid = manager.status()['a.b'].pid;
    const changed: string[] = [];
    manager.on('toolsChanged', ({ server }) => changed.push(server));
    expect(await manager.reload({ mcpServers: { 'a.b': echo, a_b: echo } })).toMatchObject({ unchanged: ['a.b'], added: ['a_b'] });
    expect(changed).toEqual(['a.b']);
    const after = (await manager.listTools({ servers: ['a.b'] })).find((t) => t.tool.name === 'echo')!.name;
    expect(after).not.toBe(before);
    expect(textOf(await manager.callTool(after, { text: 'renamed' }))).toBe('renamed');
    expect(manager.status()['a.b'].pid).toBe(pid);
    // The plain name now belongs to the added server.
    expect(textOf(await manager.callTool('mcp__a_b__echo', { text: 'new' }))).toBe('new');
    expect(manager.status().a_b.state).toBe('ready');
  });

  it('renames the prompts of a kept server whose public name an added server now collides with', async () => {
    const prompts = fixture('host-features.mjs');
    const manager = manage({ 'a.b': prompts });
    const before = (await manager.listPrompts()).map((p) => p.name);
    expect(before).toContain('mcp__a_b__greet');
    const changed: string[] = [];
    manager.on('promptsChanged', ({ server }) => changed.push(server));
    await manager.reload({ mcpServers: { 'a.b': prompts, a_b: prompts } });
    expect(changed).toEqual(['a.b']);
    const after = (await manager.listPrompts({ servers: ['a.b'] })).map((p) => p.name);
    expect(after).toHaveLength(before.length);
    expect(after).not.toContain('mcp__a_b__greet');
    expect((await manager.getPrompt(after.find((n) => n.endsWith('greet'))!, { who: 'kept' })).messages.length).toBeGreaterThan(0);
    // The plain name now belongs to the added server.
    await manager.getPrompt('mcp__a_b__greet', { who: 'added' });
    expect(manager.status().a_b.state).toBe('ready');
  });

  it('forgets what it knew of a changed server: its prompts are listed again from the new entry', async () => {
    const manager = manage({ p: fixture('host-features.mjs') });
    expect((await manager.listPrompts()).map((p) => p.prompt.name)).toEqual(['greet']);
    await manager.reload({ mcpServers: { p: { ...fixture('host-features.mjs'), env: { PROMPT_SET: 'two' } } } });
    expect((await manager.listPrompts()).map((p) => p.prompt.name).sort()).toEqual(['greet', 'part']);
  });

  it('starts a server added back while its removed predecessor still drains only after that one is gone', async () => {
    const manager = manage({ a: echo });
    await manager.callServerTool('a', 'echo', { text: 'x' });
    const oldPid = manager.status().a.pid as number;
    const finished: string[] = [];
    const slow = manager.callServerTool('a', 'slow', { ms: 800 }).then((r) => (finished.push('old call'), r));
    expect(await waitFor(() => manager.metrics().a.inFlight === 1)).toBe(true);
    await manager.reload({ mcpServers: {} });
    await manager.reload({ mcpServers: { a: echo } });
    expect(manager.status().a.state).toBe('idle');
    const again = await manager.callServerTool('a', 'echo', { text: 'again' });
    finished.push('new call');
    expect(textOf(again)).toBe('again');
    expect(textOf(await slow)).toBe('done');
    expect(finished).toEqual(['old call', 'new call']);
    expect(manager.status().a.pid).not.toBe(oldPid);
    expect(isAlive(oldPid)).toBe(false);
  });

  it('loses and fails no call among many while reloads keep changing one server', async () => {
    const manager = manage({ same: echo, changed: echo });
    const calls: Promise<string>[] = [];
    const fire = (n: number) => {
      for (let i = 0; i < n; i++) {
        for (const server of ['same', 'changed']) {
          const text = `${server}-${calls.length}`;
          calls.push(manager.callTool(`mcp__${server}__slow`, { ms: 20 + (i % 5) * 20 }).then(() => manager.callTool(`mcp__${server}__echo`, { text })).then(textOf));
        }
      }
    };
    fire(20);
    for (let round = 1; round <= 3; round++) {
      await manager.reload({ mcpServers: { same: echo, changed: { ...echo, env: { ECHO_VERSION: `${round}.0.0` } } } });
      fire(20);
    }
    const texts = await Promise.all(calls);
    expect(texts).toEqual(calls.map((_, i) => `${i % 2 === 0 ? 'same' : 'changed'}-${i}`));
    expect(manager.metrics().same).toMatchObject({ starts: 1, restarts: 0, inFlight: 0 });
    expect(manager.metrics().changed.starts).toBeLessThanOrEqual(4);
    expect(Object.values(manager.metrics().changed.errors)).toEqual([]);
    expect(textOf(await manager.callServerTool('changed', 'env', { name: 'ECHO_VERSION' }))).toBe('3.0.0');
  });

  it('makes an invalid new entry invalid and touches nothing else', async () => {
    const manager = manage({ a: echo, b: echo });
    await manager.callServerTool('a', 'echo', { text: 'x' });
    const pid = manager.status().a.pid;
    const report = await manager.reload({ mcpServers: { a: echo, b: { command: 3 } } });
    expect(report).toMatchObject({ changed: ['b'], unchanged: ['a'] });
    expect(manager.status().b).toMatchObject({ state: 'invalid', lastError: { code: 'invalid-config' } });
    await expect(manager.callServerTool('b', 'echo', { text: 'x' })).rejects.toMatchObject({ code: 'invalid-config' });
    expect(manager.status().a).toMatchObject({ state: 'ready', pid });
  });

  it('rejects something that is not a config and changes nothing', async () => {
    const manager = manage({ a: echo });
    await expect(manager.reload({ nothing: true })).rejects.toMatchObject({ code: 'invalid-config' });
    await expect(manager.reload('{ not json')).rejects.toMatchObject({ code: 'invalid-config' });
    expect(Object.keys(manager.status())).toEqual(['a']);
    // The queue goes on after a failed reload.
    expect(await manager.reload({ mcpServers: { a: echo, b: echo } })).toMatchObject({ added: ['b'], unchanged: ['a'] });
  });

  it('lets sessions made before a reload see the new servers their view allows', async () => {
    const manager = manage({ a: echo, b: echo });
    const all = manager.session();
    const some = manager.session({ servers: ['a', 'b'] });
    await manager.reload({ mcpServers: { a: echo, c: echo } });
    expect(textOf(await all.callTool('mcp__c__echo', { text: 'c' }))).toBe('c');
    expect((await all.listTools()).some((t) => t.server === 'c')).toBe(true);
    await expect(some.callTool('mcp__c__echo', { text: 'c' })).rejects.toMatchObject({ code: 'unknown-tool' });
    await expect(some.callServerTool('b', 'echo', { text: 'b' })).rejects.toMatchObject({ code: 'unknown-server' });
    expect(textOf(await some.callServerTool('a', 'echo', { text: 'a' }))).toBe('a');
    // The server comes back under the same name: the session's view allows it again.
    await manager.reload({ mcpServers: { a: echo, b: echo } });
    expect(textOf(await some.callServerTool('b', 'echo', { text: 'b' }))).toBe('b');
  });

  it('applies reloads one at a time, in call order', async () => {
    const manager = manage({ a: echo });
    const first = manager.reload({ mcpServers: { a: echo, b: echo } });
    const second = manager.reload({ mcpServers: { b: echoV2 } });
    expect(await first).toEqual({ added: ['b'], removed: [], changed: [], unchanged: ['a'] });
    expect(await second).toEqual({ added: [], removed: ['a'], changed: ['b'], unchanged: [] });
    expect(Object.keys(manager.status())).toEqual(['b']);
  });

  it('is safe against a shutdown: nothing outlives it, and a later reload rejects with closed', async () => {
    const manager = manage({ a: echo, b: echo });
    await manager.callServerTool('a', 'echo', { text: 'x' });
    await manager.callServerTool('b', 'echo', { text: 'x' });
    const pids = Object.values(manager.status()).map((s) => s.pid as number);
    const inFlight = manager.callServerTool('a', 'slow', { ms: 10_000 }).catch((e) => e);
    expect(await waitFor(() => manager.metrics().a.inFlight === 1)).toBe(true);
    expect(await manager.reload({ mcpServers: { a: echoV2, b: echo } })).toMatchObject({ changed: ['a'] });
    const racing = manager.reload({ mcpServers: { b: echo } }).catch((e) => e);
    const started = Date.now();
    await manager.shutdown();
    // The changed server was draining its call: the shutdown ends it instead of waiting 10 s.
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await inFlight).code).toBe('closed');
    expect(pids.every((pid) => !isAlive(pid))).toBe(true);
    expect(await racing).toMatchObject({ code: 'closed' });
    await expect(manager.reload({ mcpServers: { a: echo } })).rejects.toMatchObject({ code: 'closed' });
    expect(Object.values(manager.status()).every((s) => s.state === 'closed')).toBe(true);
  });
});
