import { spawn } from 'node:child_process';
import { chownSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { daemonStatus } from '../../../src/share/daemon/control.js';
import { daemonPaths } from '../../../src/share/daemon/paths.js';
import { safeEnvironment } from '../../../src/transport/stdio/child-env.js';
import type { ElicitRequest } from '../../../src/protocol/types.js';
import { fixture, isAlive, repoRoot, textOf, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import { daemonPid, daemonsIn, sharedManager, sharedOptions } from './support.js';

const echo = { e: fixture('echo-server.mjs') };

describe('the pool daemon: questions, failures and lifetime', () => {
  it("a server's question reaches only the client whose call caused it; ambiguous, it is asked of no client", async () => {
    const shared = sharedOptions();
    const asked: string[] = [];
    const handler = (who: string) => async (request: ElicitRequest) => (asked.push(`${who}: ${request.message}`), { action: 'accept' as const, content: { name: who } });
    const servers = { f: fixture('host-features.mjs') };
    const a = sharedManager(servers, shared, { capabilities: { elicitation: true } });
    const b = sharedManager(servers, shared, { capabilities: { elicitation: true } });
    const chatA = a.session({ handlers: { elicitation: handler('a') } });
    const chatB = b.session({ handlers: { elicitation: handler('b') } });
    await b.listTools();
    const answer = JSON.parse(textOf(await chatA.callTool('mcp__f__ask', { message: 'Who?' })));
    expect(answer.result).toEqual({ action: 'accept', content: { name: 'a', size: 3 } });
    expect(asked).toEqual(['a: Who?']);
    expect(a.status().f.pid).toBe(b.status().f.pid);
    // Both clients have a call in flight when the server asks: it is no one's to answer.
    const both = await Promise.all([chatA.callTool('mcp__f__ask', { message: 'A?', together: 2 }), chatB.callTool('mcp__f__ask', { message: 'B?', together: 2 })]);
    expect(both.map((r) => JSON.parse(textOf(r)).result)).toEqual([{ action: 'decline' }, { action: 'decline' }]);
    expect(asked).toEqual(['a: Who?']);
  });

  it('a client killed mid-call: the other clients carry on with the same server process', async () => {
    const shared = sharedOptions();
    const mine = sharedManager(echo, shared);
    await mine.callTool('mcp__e__echo', { text: 'x' });
    const server = mine.status().e.pid!;
    const child = spawn(process.execPath, [resolve(repoRoot, 'test/fixtures/shared-client.mjs'), shared.runtimeDir, '20000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The same host variables as this process's: the server's environment is part of its fingerprint.
      env: safeEnvironment(),
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      expect(await waitFor(() => out.includes('attached'), 15000, 20)).toBe(true);
      const sessions = async () => (await daemonStatus(shared))!.servers[0].sessions;
      expect(await sessions()).toBe(2);
      child.kill('SIGKILL');
      await exited;
      const results = await Promise.all([1, 2, 3].map((n) => mine.callTool('mcp__e__echo', { text: `after ${n}` })));
      expect(results.map(textOf)).toEqual(['after 1', 'after 2', 'after 3']);
      expect(mine.status().e.pid).toBe(server);
      const deadline = Date.now() + 5000;
      while ((await sessions()) !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await sessions()).toBe(1);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('daemon SIGKILLed: calls in flight fail unavailable, no server is left, the next call starts a new daemon', async () => {
    const shared = sharedOptions();
    const manager = sharedManager(echo, shared);
    await manager.callTool('mcp__e__echo', { text: 'x' });
    const server = manager.status().e.pid!;
    const daemon = await daemonPid(shared);
    const inFlight = manager.callTool('mcp__e__slow', { ms: 20000 }).then(() => undefined, (e: unknown) => e);
    expect(await waitFor(() => manager.metrics().e.inFlight === 1)).toBe(true);
    process.kill(daemon, 'SIGKILL');
    expect(await inFlight).toMatchObject({ code: 'unavailable', message: expect.stringContaining('the pool daemon went away') });
    expect(await waitFor(() => !isAlive(server) && !isAlive(daemon), 5000, 20)).toBe(true);
    expect(textOf(await manager.callTool('mcp__e__echo', { text: 'again' }))).toBe('again');
    const next = await daemonPid(shared);
    expect(next).not.toBe(daemon);
    expect(manager.status().e.pid).not.toBe(server);
    expect(daemonsIn(shared.runtimeDir)).toEqual([next]);
  });

  it('with no client for its idle time the daemon stops its servers and exits, and logs why', async () => {
    const shared = sharedOptions({ idleTimeoutMs: 300 });
    const manager = sharedManager(echo, shared);
    await manager.callTool('mcp__e__echo', { text: 'x' });
    const server = manager.status().e.pid!;
    const daemon = await daemonPid(shared);
    await manager.shutdown();
    expect(await waitFor(() => !isAlive(daemon) && !isAlive(server), 10000, 20)).toBe(true);
    const log = readFileSync(daemonPaths(shared, '0.1.0').log, 'utf8');
    expect(log).toMatch(/stopping: idle for 300 ms/);
  });

  it("refuses a folder another user owns, and starts nothing", async () => {
    const dir = tempDir('lazy-mcp-daemon-test-');
    let foreign = dir;
    if (process.getuid?.() === 0) chownSync(dir, 65534, 65534);
    else foreign = '/'; // root's: not this user's either
    const manager = sharedManager(echo, { runtimeDir: foreign });
    const refused = await manager.callTool('mcp__e__echo', { text: 'x' }).then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/belongs to user \d+, not to this user .*refusing to use it/) });
    expect(daemonsIn(foreign)).toEqual([]);
  });
});
