import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { DEATH_SEEN_WITHIN_MS, type Member, Membership } from '../../../src/share/cluster/membership.js';
import { resolveCluster } from '../../../src/share/cluster/options.js';
import { openRedis, type RedisClient } from '../../../src/share/cluster/redis-link.js';
import { RedisManifestStore, RedisTokenStore } from '../../../src/share/cluster/redis-store.js';
import { ownerOf } from '../../../src/share/cluster/rendezvous.js';
import { seal, unseal } from '../../../src/share/cluster/sealed.js';
import type { OAuthRecord } from '../../../src/transport/http/oauth/token-store.js';
import { SECRET, TestRedis } from './support.js';

let redis: TestRedis;
const clients: RedisClient[] = [];
const memberships: Membership[] = [];

beforeAll(async () => {
  redis = await TestRedis.start();
});
afterEach(async () => {
  await Promise.all(memberships.splice(0).map((m) => m.close()));
  for (const client of clients.splice(0)) client.disconnect();
});
afterAll(async () => {
  await redis.stop();
});

async function client(): Promise<RedisClient> {
  const made = await openRedis(redis.url, 'test', () => undefined);
  clients.push(made);
  return made;
}

const record = (accessToken: string): OAuthRecord => ({
  version: 1,
  server: 'docs',
  resource: 'https://mcp.example/docs',
  issuer: 'https://auth.example',
  client: { kind: 'dynamic', clientId: 'c-1', authMethod: 'none' },
  tokens: { accessToken, tokenType: 'Bearer', refreshToken: `refresh-${accessToken}` },
});

describe('OAuth tokens in Redis', () => {
  it('are encrypted at rest: nothing in Redis shows them, and another secret cannot read them', async () => {
    const keys = resolveCluster({ redis: redis.url, advertise: 'http://127.0.0.1:1', secret: SECRET }).keys;
    const prefix = `t-${randomBytes(4).toString('hex')}:`;
    const store = new RedisTokenStore(await client(), prefix, keys.store);
    await store.set('docs|https://mcp.example/docs', record('access-XYZZY-123'));
    expect((await store.get('docs|https://mcp.example/docs'))?.tokens?.accessToken).toBe('access-XYZZY-123');

    const raw = new Redis(redis.url);
    try {
      const stored = await raw.keys(`${prefix}*`);
      expect(stored).toHaveLength(1);
      const value = (await raw.get(stored[0]))!;
      expect(value).not.toMatch(/XYZZY|refresh-|mcp\.example|c-1/);
      expect(Buffer.from(value, 'base64').toString('latin1')).not.toMatch(/XYZZY/);
    } finally {
      raw.disconnect();
    }
    const otherKeys = resolveCluster({ redis: redis.url, advertise: 'http://127.0.0.1:1', secret: `${SECRET}-other` }).keys;
    expect(await new RedisTokenStore(await client(), prefix, otherKeys.store).get('docs|https://mcp.example/docs')).toBeUndefined();
  });
});

describe('the manifest cache in Redis', () => {
  it('serves an entry another member saved, only for the same key, and drops it on invalidate', async () => {
    const prefix = `m-${randomBytes(4).toString('hex')}:`;
    const problems: string[] = [];
    const a = new RedisManifestStore(await client(), prefix, (_s, message) => problems.push(message));
    const b = new RedisManifestStore(await client(), prefix, (_s, message) => problems.push(message));
    a.save('notes', 'key-1', '1.0.0', [{ name: 'pid', inputSchema: { type: 'object' } }], { era: 'legacy' });
    await a.flushed(2000);
    expect(await b.load('notes', 'key-1')).toMatchObject({ server: 'notes', tools: [{ name: 'pid' }], era: 'legacy' });
    expect(await b.load('notes', 'key-2')).toBeUndefined();
    b.invalidate('notes');
    await b.flushed(2000);
    expect(await a.load('notes', 'key-1')).toBeUndefined();
    expect(problems).toEqual([]);
  });
});

describe('sealed routing state', () => {
  const key = randomBytes(32);
  it('opens what was sealed, refuses an altered one as forged and an old one as expired', async () => {
    const sealed = seal(key, 'session', { m: 'member-1' }, 60_000);
    expect(unseal(key, 'session', sealed)).toEqual({ ok: true, value: { m: 'member-1' } });
    const flipped = `${sealed.slice(0, -3)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-2)}`;
    expect(unseal(key, 'session', flipped)).toEqual({ ok: false, why: 'forged' });
    expect(unseal(key, 'round', sealed)).toEqual({ ok: false, why: 'forged' });
    expect(unseal(randomBytes(32), 'session', sealed)).toEqual({ ok: false, why: 'forged' });
    expect(unseal(key, 'session', 'c1.')).toEqual({ ok: false, why: 'forged' });
    const old = seal(key, 'session', { m: 'member-1' }, -1);
    expect(unseal(key, 'session', old)).toEqual({ ok: false, why: 'expired' });
  });
});

describe('rendezvous placement', () => {
  it('every member computes the same owner; a leave moves only the keys its member held', () => {
    const members = ['m1', 'm2', 'm3', 'm4'];
    const keys = Array.from({ length: 400 }, (_, i) => `server-${i}`);
    const before = new Map(keys.map((k) => [k, ownerOf(k, members)]));
    expect(ownerOf('server-1', [...members].reverse())).toBe(before.get('server-1'));
    const counts = new Map<string, number>();
    for (const owner of before.values()) counts.set(owner!, (counts.get(owner!) ?? 0) + 1);
    for (const m of members) expect(counts.get(m)).toBeGreaterThan(60);
    const after = new Map(keys.map((k) => [k, ownerOf(k, ['m1', 'm2', 'm4'])]));
    for (const k of keys) if (before.get(k) !== 'm3') expect(after.get(k)).toBe(before.get(k));
  });
});

describe('membership', () => {
  it(`sees a join at the next refresh and a death (heartbeats stop) within ${DEATH_SEEN_WITHIN_MS} ms`, async () => {
    const prefix = `j-${randomBytes(4).toString('hex')}:`;
    const a = new Membership(await client(), prefix, 'http://a', async () => undefined);
    memberships.push(a);
    await a.start();
    const seen = (test: (members: Member[]) => boolean) =>
      new Promise<number>((resolve) => {
        const began = performance.now();
        const listener = (members: Member[]) => {
          if (!test(members)) return;
          a.off('change', listener);
          resolve(performance.now() - began);
        };
        a.on('change', listener);
      });
    const bClient = await client();
    const b = new Membership(bClient, prefix, 'http://b', async () => undefined);
    const joined = seen((members) => members.some((m) => m.id === b.self.id));
    await b.start();
    const joinMs = await joined;
    expect(joinMs).toBeLessThan(1000);
    // A SIGKILL as Redis sees it: the heartbeats stop, the key is left to expire.
    const died = seen((members) => !members.some((m) => m.id === b.self.id));
    bClient.disconnect();
    const deathMs = await died;
    await b.close();
    process.stderr.write(`membership: join seen in ${Math.round(joinMs)} ms, death in ${Math.round(deathMs)} ms (bound ${DEATH_SEEN_WITHIN_MS} ms)\n`);
    expect(deathMs).toBeLessThan(DEATH_SEEN_WITHIN_MS + 300);
  }, 15_000);
});
