import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ManagerEvents } from '../../../src/manager/manager.js';
import { fixture, isAlive, textOf, waitFor } from '../../support/fixtures.js';
import { managersShutAfterEach } from '../../support/managers.js';
import { tempDir } from '../../support/temp-dirs.js';

const manage = managersShutAfterEach();

/** A server that reports its TOKEN, one instance per principal. */
function perPrincipal(extra: object = {}) {
  const f = fixture('reports-credential.mjs', '${principal:ARG}');
  return { gh: { ...f, env: { TOKEN: '${principal:TOKEN}' }, ...extra } };
}

type Who = { token: string | null; arg: string | null; pid: number };
const whoami = async (session: { callTool(name: string): Promise<{ content: unknown[] }> }): Promise<Who> => JSON.parse(textOf(await session.callTool('mcp__gh__whoami')));

describe('servers per principal', () => {
  it('runs one process per principal, each with its own credential, and never lets one reach the other', async () => {
    const manager = manage(perPrincipal());
    const alice = manager.session({ principal: { id: 'alice', credentials: { TOKEN: 'alice-secret-1', ARG: 'alice-arg' } } });
    const bob = manager.session({ principal: { id: 'bob', credentials: { TOKEN: 'bob-secret-22', ARG: 'bob-arg' } } });
    const [a, b] = await Promise.all([whoami(alice), whoami(bob)]);
    expect(a).toMatchObject({ token: 'alice-secret-1', arg: 'alice-arg' });
    expect(b).toMatchObject({ token: 'bob-secret-22', arg: 'bob-arg' });
    expect(a.pid).not.toBe(b.pid);
    // A second session of alice's reaches her instance, not a new one and never bob's.
    const alice2 = manager.session({ principal: { id: 'alice', credentials: { TOKEN: 'alice-secret-1', ARG: 'alice-arg' } } });
    expect((await whoami(alice2)).pid).toBe(a.pid);
    expect(manager.status().gh).toMatchObject({ state: 'idle', instances: 2 });
    // The listing is one shared entry: every session sees the same tools.
    expect((await bob.listTools()).map((t) => t.name).sort()).toEqual(['mcp__gh__leak', 'mcp__gh__slow', 'mcp__gh__whoami']);
    // The manager itself has no principal.
    await expect(manager.callTool('mcp__gh__whoami')).rejects.toMatchObject({ code: 'auth-required', server: 'gh', message: expect.stringContaining('one instance per principal') });
    await manager.shutdown();
    expect(await waitFor(() => !isAlive(a.pid) && !isAlive(b.pid))).toBe(true);
  });

  it('a missing credential is auth-required naming it, and nothing is started', async () => {
    const manager = manage(perPrincipal());
    const starts: ManagerEvents['stateChange'][] = [];
    manager.on('stateChange', (e) => starts.push(e));
    const carol = manager.session({ principal: { id: 'carol', credentials: { ARG: 'x' } } });
    const error = await carol.callServerTool('gh', 'whoami').catch((e) => e);
    expect(error).toMatchObject({ code: 'auth-required', server: 'gh', phase: 'auth' });
    expect(error.message).toBe('server "gh": principal "carol" has no credential TOKEN; give it in session({ principal: { credentials } }) or through the manager\'s credentials resolver');
    expect(manager.status().gh.instances).toBe(0);
    expect(starts).toEqual([]);
  });

  it('asks the credentials resolver once per session and server, and the session\'s own values win', async () => {
    const asked: string[] = [];
    const manager = manage(perPrincipal(), {
      credentials: async (principal, server) => (asked.push(`${principal.id}/${server}`), { TOKEN: `${principal.id}-from-resolver`, ARG: 'resolved' }),
    });
    const dave = manager.session({ principal: { id: 'dave' } });
    expect(await whoami(dave)).toMatchObject({ token: 'dave-from-resolver', arg: 'resolved' });
    expect(await whoami(dave)).toMatchObject({ token: 'dave-from-resolver' });
    expect(asked).toEqual(['dave/gh']);
    const erin = manager.session({ principal: { id: 'erin', credentials: { ARG: 'own' } } });
    expect(await whoami(erin)).toMatchObject({ token: 'erin-from-resolver', arg: 'own' });
    const failing = manage(perPrincipal(), { credentials: () => Promise.reject(new Error('vault is sealed')) });
    await expect(failing.session({ principal: { id: 'x' } }).callServerTool('gh', 'whoami')).rejects.toMatchObject({
      code: 'auth-required',
      message: expect.stringContaining('the credentials resolver failed for principal "x": vault is sealed'),
    });
  });

  it('stops an idle instance and starts a fresh one on the next call', async () => {
    const manager = manage(perPrincipal({ idleTimeout: 300 }));
    const alice = manager.session({ principal: { id: 'alice', credentials: { TOKEN: 'tok-a', ARG: 'a' } } });
    const first = await whoami(alice);
    expect(await waitFor(() => !isAlive(first.pid), 5000)).toBe(true);
    expect(manager.status().gh.instances).toBe(0);
    const second = await whoami(alice);
    expect(second.token).toBe('tok-a');
    expect(second.pid).not.toBe(first.pid);
  });

  it('keeps at most maxInstances alive: the least recently used leaves first, after its calls in flight', async () => {
    const manager = manage(perPrincipal({ maxInstances: 2 }));
    const session = (id: string) => manager.session({ principal: { id, credentials: { TOKEN: `tok-${id}`, ARG: id } } });
    const [a, b, c] = [session('a'), session('b'), session('c')];
    const pa = (await whoami(a)).pid;
    const pb = (await whoami(b)).pid;
    // a is the least recently used, with a call in flight when c arrives.
    const slow = a.callTool('mcp__gh__slow', { ms: 600 });
    await whoami(b);
    const pc = (await whoami(c)).pid;
    expect(textOf(await slow)).toBe('slept 600');
    expect(await waitFor(() => !isAlive(pa))).toBe(true);
    expect(isAlive(pb) && isAlive(pc)).toBe(true);
    expect(manager.status().gh.instances).toBe(2);
    // a comes back in a fresh process, and b (now the least recently used) makes room.
    const again = await whoami(a);
    expect(again).toMatchObject({ token: 'tok-a' });
    expect(again.pid).not.toBe(pa);
    expect(await waitFor(() => !isAlive(pb))).toBe(true);
  });

  it('never writes a credential to the cache, errors, stderr events, status or metrics', async () => {
    const cacheDir = tempDir();
    const manager = manage(perPrincipal(), { cacheDir });
    const lines: string[] = [];
    manager.on('stderr', ({ line }) => lines.push(line));
    const alice = manager.session({ principal: { id: 'alice', credentials: { TOKEN: 'very-secret-token', ARG: 'arg-secret-value' } } });
    await whoami(alice);
    const error = await alice.callTool('mcp__gh__leak').catch((e) => e);
    expect(error).toMatchObject({ code: 'rpc-error', message: expect.stringContaining('token *** was refused') });
    expect(await waitFor(() => lines.some((l) => l.includes('was refused')))).toBe(true);
    await manager.shutdown();
    const seen = [JSON.stringify(error), error.message, String(error.rpc?.message), ...lines, JSON.stringify(manager.status()), JSON.stringify(manager.metrics())];
    for (const file of readdirSync(cacheDir, { recursive: true }) as string[]) {
      try {
        seen.push(readFileSync(join(cacheDir, file), 'utf8'));
      } catch {
        // a folder
      }
    }
    expect(seen.length).toBeGreaterThan(5);
    for (const text of seen) {
      expect(text).not.toContain('very-secret-token');
      expect(text).not.toContain('arg-secret-value');
    }
  });

  it('rejects a principal that is not { id, credentials? }, without quoting a value', () => {
    const manager = manage(perPrincipal());
    expect(() => manager.session({ principal: { id: '' } })).toThrow(expect.objectContaining({ code: 'invalid-arguments', message: expect.stringContaining('session option principal.id') }));
    expect(() => manager.session({ principal: { id: 'a', credentials: { TOKEN: 42 as never } } })).toThrow(
      expect.objectContaining({ message: 'session option principal.credentials.TOKEN must be a string, got number' }),
    );
  });
});

describe('servers per session', () => {
  it('runs one process per session, and the manager\'s calls have one of their own', async () => {
    const manager = manage({ s: { ...fixture('reports-credential.mjs'), instances: 'per-session' } });
    const one = manager.session();
    const two = manager.session();
    const call = async (s: { callTool(n: string): Promise<{ content: unknown[] }> }) => JSON.parse(textOf(await s.callTool('mcp__s__whoami'))).pid as number;
    const [p1, p2, p0] = await Promise.all([call(one), call(two), call(manager)]);
    expect(new Set([p1, p2, p0]).size).toBe(3);
    expect(await call(one)).toBe(p1);
    expect(manager.status().s.instances).toBe(3);
  });
});

describe('unrouted questions', () => {
  const answers = (name: string) => async () => ({ action: 'accept' as const, content: { name } });

  it('emits unrouted naming the server, the method and the candidate sessions when a question cannot be tied to one', async () => {
    const manager = manage({ f: fixture('host-features.mjs') }, { capabilities: { elicitation: true } });
    const events: ManagerEvents['unrouted'][] = [];
    manager.on('unrouted', (e) => events.push(e));
    const one = manager.session({ handlers: { elicitation: answers('one') } });
    const two = manager.session({ handlers: { elicitation: answers('two') } });
    const results = await Promise.all([one.callTool('mcp__f__ask', { together: 2 }), two.callTool('mcp__f__ask', { together: 2 })]);
    expect(results.map((r) => JSON.parse(textOf(r)).result)).toEqual([{ action: 'decline' }, { action: 'decline' }]);
    expect(events).toHaveLength(2);
    for (const event of events) expect({ ...event, sessions: [...event.sessions].sort() }).toEqual({ server: 'f', method: 'elicitation/create', sessions: [one.id, two.id].sort() });
  });

  it('per-session instances tie each question to its own session', async () => {
    const manager = manage({ f: { ...fixture('host-features.mjs'), instances: 'per-session' } }, { capabilities: { elicitation: true } });
    const events: ManagerEvents['unrouted'][] = [];
    manager.on('unrouted', (e) => events.push(e));
    const one = manager.session({ handlers: { elicitation: answers('one') } });
    const two = manager.session({ handlers: { elicitation: answers('two') } });
    const results = await Promise.all([one.callTool('mcp__f__ask', { message: 'A?' }), two.callTool('mcp__f__ask', { message: 'B?' })]);
    expect(results.map((r) => JSON.parse(textOf(r)).result.content.name)).toEqual(['one', 'two']);
    expect(events).toEqual([]);
  });
});
