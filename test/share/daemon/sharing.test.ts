import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { daemonStatus } from '../../../src/share/daemon/control.js';
import { hello } from '../../../src/share/daemon/hello.js';
import { daemonPaths } from '../../../src/share/daemon/paths.js';
import { readSecret } from '../../../src/share/daemon/secret.js';
import { SocketChannel } from '../../../src/share/daemon/socket-channel.js';
import { ATTACH_METHOD, WIRE_VERSION } from '../../../src/share/daemon/wire.js';
import { McpError } from '../../../src/errors.js';
import { fixture, isAlive, textOf, waitFor } from '../../support/fixtures.js';
import { abortedInFlight, alsoStop, daemonsIn, processesWith, sharedManager, sharedOptions } from './support.js';

const echo = { e: fixture('echo-server.mjs') };

describe('the pool daemon shares one process per server fingerprint', () => {
  it('two clients: one daemon, one server process, both sessions in its status; folder 0700, socket 0600', async () => {
    const shared = sharedOptions();
    const [a, b] = [sharedManager(echo, shared), sharedManager(echo, shared)];
    const [ra, rb] = await Promise.all([a.callTool('mcp__e__echo', { text: 'a' }), b.callTool('mcp__e__echo', { text: 'b' })]);
    expect([textOf(ra), textOf(rb)]).toEqual(['a', 'b']);
    expect(daemonsIn(shared.runtimeDir)).toHaveLength(1);
    const pid = a.status().e.pid!;
    expect(b.status().e.pid).toBe(pid);
    expect(processesWith('echo-server.mjs').filter((p) => p === pid)).toEqual([pid]);
    const status = (await daemonStatus(shared))!;
    expect(status.servers).toEqual([expect.objectContaining({ name: 'e', pid, sessions: 2, state: 'ready' })]);
    expect(status.servers[0].rssBytes).toBeGreaterThan(0);
    expect(status.clients).toEqual([{ pid: process.pid, connections: 2 }]);
    const paths = daemonPaths(shared, status.version);
    expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(statSync(paths.socket).mode & 0o777).toBe(0o600);
  });

  it('twenty clients starting at once make one daemon and one server process', async () => {
    const shared = sharedOptions();
    const managers = Array.from({ length: 20 }, () => sharedManager(echo, shared));
    const results = await Promise.all(managers.map((m, i) => m.callTool('mcp__e__echo', { text: `n${i}` })));
    expect(results.map(textOf)).toEqual(managers.map((_, i) => `n${i}`));
    expect(daemonsIn(shared.runtimeDir)).toHaveLength(1);
    expect(new Set(managers.map((m) => m.status().e.pid)).size).toBe(1);
    const status = (await daemonStatus(shared))!;
    expect(status.servers).toHaveLength(1);
    expect(status.servers[0].sessions).toBe(20);
  }, 90_000);

  it('a sandboxed entry is never handed to the daemon (which would run it as given): it runs in its own pool, sandboxed', async () => {
    const shared = sharedOptions();
    const manager = sharedManager({ e: { ...fixture('echo-server.mjs'), sandbox: true } }, shared);
    expect(textOf(await manager.callTool('mcp__e__echo', { text: 'inside' }))).toBe('inside');
    expect(manager.status().e).toMatchObject({ state: 'ready', sandbox: { tool: 'bwrap', network: false } });
    expect(daemonsIn(shared.runtimeDir)).toEqual([]);
  });

  it('entries that differ (here in env) get separate processes; the same entry again shares', async () => {
    const shared = sharedOptions();
    const one = sharedManager({ e: { ...fixture('echo-server.mjs'), env: { ECHO_VERSION: '1.0.0' } } }, shared);
    const two = sharedManager({ e: { ...fixture('echo-server.mjs'), env: { ECHO_VERSION: '2.0.0' } } }, shared);
    const again = sharedManager({ e: { ...fixture('echo-server.mjs'), env: { ECHO_VERSION: '2.0.0' } } }, shared);
    await Promise.all([one, two, again].map((m) => m.callTool('mcp__e__echo', { text: 'x' })));
    expect(one.status().e.pid).not.toBe(two.status().e.pid);
    expect(again.status().e.pid).toBe(two.status().e.pid);
    expect((await one.serverInfo('e')).serverInfo.version).toBe('1.0.0');
    expect((await two.serverInfo('e')).serverInfo.version).toBe('2.0.0');
    const status = (await daemonStatus(shared))!;
    expect(status.servers.map((s) => s.sessions).sort()).toEqual([1, 2]);
    expect(new Set(status.servers.map((s) => s.fingerprint)).size).toBe(2);
  });

  it('a server notification (tools list_changed) reaches every client; a crash ends every session and the next call starts it again', async () => {
    const shared = sharedOptions();
    const [a, b] = [sharedManager(echo, shared), sharedManager(echo, shared)];
    await Promise.all([a.listTools(), b.listTools()]);
    const heard: string[] = [];
    a.on('toolsChanged', () => heard.push('a'));
    b.on('toolsChanged', () => heard.push('b'));
    await a.callTool('mcp__e__tools_changed');
    expect(await waitFor(() => heard.includes('a') && heard.includes('b'))).toBe(true);
    const first = a.status().e.pid!;
    const crashed = await a.callTool('mcp__e__crash').then(() => undefined, (e: unknown) => e);
    expect(crashed).toMatchObject({ code: 'peer-exited' });
    expect(await waitFor(() => b.status().e.state === 'stopped' && !isAlive(first))).toBe(true);
    expect(textOf(await b.callTool('mcp__e__echo', { text: 'back' }))).toBe('back');
    expect(b.status().e.pid).not.toBe(first);
  });

  it("progress reaches the caller, and a caller's abort cancels the call at the shared server", async () => {
    const shared = sharedOptions();
    const manager = sharedManager(echo, shared);
    const steps: number[] = [];
    const done = await manager.callTool('mcp__e__slow', { ms: 90, interval: 30 }, { onProgress: (p) => steps.push(p.progress) });
    expect(textOf(done)).toBe('done');
    expect(steps).toEqual([1, 2, 3]);
    const { outcome, seen } = await abortedInFlight(manager);
    expect(outcome).toMatchObject({ code: 'cancelled' });
    expect(seen).toHaveLength(1);
  });

  it('other versions never mix: each gets its own daemon (versioned socket); a mismatched attach is refused clearly', async () => {
    const shared = sharedOptions();
    const other = { ...shared, version: '0.0.1-other' };
    alsoStop(other);
    const mine = sharedManager(echo, shared);
    const theirs = sharedManager(echo, other);
    await Promise.all([mine.callTool('mcp__e__echo', { text: 'x' }), theirs.callTool('mcp__e__echo', { text: 'y' })]);
    expect(daemonsIn(shared.runtimeDir)).toHaveLength(2);
    expect(mine.status().e.pid).not.toBe(theirs.status().e.pid);
    expect((await daemonStatus(other))!.version).toBe('0.0.1-other');

    // A client of another version on this version's socket (as a hand-made attach would be).
    const socket = connect(daemonPaths(shared, (await daemonStatus(shared))!.version).socket);
    const channel = new SocketChannel(socket, { lost: () => new McpError('unavailable', 'gone') });
    const secret = readSecret(daemonPaths(shared, (await daemonStatus(shared))!.version).secret);
    const params = { wire: WIRE_VERSION, version: '9.9.9', secret, pid: process.pid, name: 'e', spec: {} };
    const refused = await hello(channel, ATTACH_METHOD, params, 5000).then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/version mismatch: this pool daemon is lazy-mcp 0\.1\.0 .*client is lazy-mcp 9\.9\.9/) });
  });

  it("a server that cannot start fails each client's start with its own reason (spawn-failed, peer-exited with stderr)", async () => {
    const shared = sharedOptions();
    const missing = sharedManager({ m: { command: '/nonexistent/server-binary' } }, shared);
    await expect(missing.callTool('mcp__m__x')).rejects.toMatchObject({ code: 'spawn-failed' });
    const dies = sharedManager({ d: fixture('exits-at-once.mjs') }, shared);
    const failed = await dies.listTools();
    expect(failed).toEqual([]);
    expect(dies.status().d).toMatchObject({ state: 'backoff', lastError: { code: 'peer-exited' } });
    expect((await daemonStatus(shared))!.servers).toEqual([]);
  });

  it('a hostile attach (bad spec) is refused naming the field, and the daemon serves on', async () => {
    const shared = sharedOptions();
    const manager = sharedManager(echo, shared);
    await manager.callTool('mcp__e__echo', { text: 'x' });
    const version = (await daemonStatus(shared))!.version;
    const channel = new SocketChannel(connect(daemonPaths(shared, version).socket), { lost: () => new McpError('unavailable', 'gone') });
    const secret = readSecret(daemonPaths(shared, version).secret);
    const params = { wire: WIRE_VERSION, version, secret, pid: process.pid, name: 'e', spec: { command: 'x', args: 'not a list' } };
    const refused = await hello(channel, ATTACH_METHOD, params, 5000).then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'invalid-config', message: expect.stringContaining('spec.args') });
    expect(textOf(await manager.callTool('mcp__e__echo', { text: 'still' }))).toBe('still');
  });
});
