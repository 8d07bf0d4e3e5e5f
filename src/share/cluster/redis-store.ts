import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { isManifestEntry, type ManifestEntry, type ManifestExtras, manifestEntry } from '../../manager/catalog/manifest-cache.js';
import type { ManifestStore } from '../../manager/catalog/manifest-store.js';
import type { Tool } from '../../protocol/types.js';
import type { OAuthRecord, TokenStore } from '../../transport/http/oauth/token-store.js';
import type { RedisClient } from './redis-link.js';

/** Largest entry read back, in bytes: a bigger one is ignored unread, whoever wrote it. */
const MAX_ENTRY_BYTES = 8 * 1024 * 1024;
/** An entry nobody rewrote for this long goes (a server removed from every config). */
const ENTRY_TTL_S = 30 * 24 * 3600;

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * The cluster's manifest cache: each server's listings (tools, prompts, description, era
 * verdict) in one Redis hash per server, one field per cache key, so that a listing made
 * by any member serves every member and spawns nothing. Writes are fire-and-forget; a
 * read while Redis is away is a miss (the caller then lists live, where it can place).
 */
export class RedisManifestStore implements ManifestStore {
  private readonly writes = new Set<Promise<unknown>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly onProblem: (server: string, message: string, error?: unknown) => void,
  ) {}

  async load(server: string, key: string): Promise<ManifestEntry | undefined> {
    let text: string | null;
    try {
      text = await this.redis.hget(this.key(server), hashOf(key));
    } catch {
      return undefined;
    }
    if (text === null || text.length > MAX_ENTRY_BYTES) return undefined;
    let entry: ManifestEntry;
    try {
      entry = JSON.parse(text) as ManifestEntry;
    } catch {
      this.onProblem(server, `ignoring the cluster's tool cache entry of server "${server}": not valid JSON`);
      return undefined;
    }
    if (!isManifestEntry(entry, server)) {
      this.onProblem(server, `ignoring the cluster's tool cache entry of server "${server}": unknown format`);
      return undefined;
    }
    return entry.key === key ? entry : undefined;
  }

  save(server: string, key: string, serverVersion: string, tools: Tool[], extras: ManifestExtras = {}): void {
    const text = JSON.stringify(manifestEntry(server, key, serverVersion, tools, extras));
    this.track(this.redis.multi().hset(this.key(server), hashOf(key), text).expire(this.key(server), ENTRY_TTL_S).exec(), server);
  }

  invalidate(server: string): void {
    this.track(this.redis.del(this.key(server)), server);
  }

  async flushed(ms: number): Promise<void> {
    if (this.writes.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.writes]), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  private track(write: Promise<unknown>, server: string): void {
    const tracked = write.then(
      () => undefined,
      (error: unknown) => this.onProblem(server, `cannot update the cluster's tool cache of server "${server}"`, error),
    );
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
  }

  private key(server: string): string {
    return `${this.prefix}manifest:${server}`;
  }
}

/**
 * OAuth records kept in Redis, encrypted at rest with AES-256-GCM under a key derived from
 * the cluster secret: Redis (and whoever reads its dumps) holds only ciphertext. The record
 * key is bound in as additional data, so a ciphertext moved to another key fails to open.
 */
export class RedisTokenStore implements TokenStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly key: Buffer,
  ) {}

  async get(name: string): Promise<OAuthRecord | undefined> {
    const text = await this.redis.get(this.redisKey(name));
    if (text === null) return undefined;
    try {
      const raw = Buffer.from(text, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(name));
      decipher.setAuthTag(raw.subarray(12, 28));
      return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as OAuthRecord;
    } catch {
      // Another secret's, or tampered with: as if absent (a login writes it again).
      return undefined;
    }
  }

  async set(name: string, value: OAuthRecord): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(name));
    const body = Buffer.concat([cipher.update(JSON.stringify(value)), cipher.final()]);
    await this.redis.set(this.redisKey(name), Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64'));
  }

  async delete(name: string): Promise<void> {
    await this.redis.del(this.redisKey(name));
  }

  private redisKey(name: string): string {
    return `${this.prefix}oauth:${hashOf(name)}`;
  }
}
