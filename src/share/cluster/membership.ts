import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisClient } from './redis-link.js';

/** One member as the others see it. */
export interface Member {
  id: string;
  /** Its base URL (see `ClusterOptions.advertise`). */
  url: string;
}

/** A member's key lives this long unless renewed, in ms: a SIGKILLed member is gone from every view within it (plus one refresh). */
export const MEMBER_TTL_MS = 2000;
/** How often a member renews its key, in ms: four chances within the TTL. */
export const HEARTBEAT_MS = 500;
/** How often a member reads the live set, in ms (a join or a leave is also announced at once). */
export const REFRESH_MS = 500;
/**
 * The bound this gives: a member that leaves in good order is seen gone at once (its key
 * deleted, the leave announced); one that dies within MEMBER_TTL_MS + REFRESH_MS = 2.5 s;
 * one a peer cannot reach at once (the peer evicts it; it comes back at its next beat if alive).
 */
export const DEATH_SEEN_WITHIN_MS = MEMBER_TTL_MS + REFRESH_MS;

/**
 * The live members of a cluster, from keys with a short TTL in Redis. Emits `change`
 * (the new list) when the set of members changes. A view is trusted only while Redis
 * answers: after MEMBER_TTL_MS without a good read, {@link healthy} is false and nothing
 * new is placed.
 */
export class Membership extends EventEmitter {
  readonly self: Member;
  private live = new Map<string, Member>();
  private lastGood = -Infinity;
  private lastError: unknown;
  private beatTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    url: string,
    /** Announces joins and leaves to every member at once. */
    private readonly announce: (type: 'join' | 'leave', id: string) => Promise<void>,
  ) {
    super();
    this.self = { id: randomUUID(), url };
  }

  /** Registers this member and starts its heartbeat and refreshes; resolves after the first try (Redis may be away). */
  async start(): Promise<void> {
    await this.beat();
    await this.announce('join', this.self.id).catch(() => undefined);
    await this.refresh();
    this.beatTimer = setInterval(() => void this.beat(), HEARTBEAT_MS).unref();
    this.refreshTimer = setInterval(() => void this.refresh(), REFRESH_MS).unref();
  }

  /** Whether the view is recent enough to place by. */
  get healthy(): boolean {
    return performance.now() - this.lastGood < MEMBER_TTL_MS;
  }

  /** Why the view cannot be used, when it is not {@link healthy}. */
  get problem(): unknown {
    return this.lastError;
  }

  /** The live members, this one included (its own key may lag a beat behind). */
  members(): Member[] {
    const all = new Map(this.live);
    all.set(this.self.id, this.self);
    return [...all.values()];
  }

  member(id: string): Member | undefined {
    return id === this.self.id ? this.self : this.live.get(id);
  }

  /** A peer could not be reached: it leaves every view now; if it is alive, its next beat brings it back. */
  async evict(id: string): Promise<void> {
    if (id === this.self.id) return;
    this.live.delete(id);
    this.emit('change', this.members());
    await this.redis.del(this.key(id)).catch(() => undefined);
    await this.announce('leave', id).catch(() => undefined);
  }

  /** Reads the live set now (another member announced a join or a leave). Single flight. */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    if (this.closed) return;
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}member:*`, 'COUNT', 200);
        cursor = next;
        keys.push(...batch);
      } while (cursor !== '0');
      const values = keys.length ? await this.redis.mget(...keys) : [];
      const next = new Map<string, Member>();
      for (const value of values) {
        const member = parseMember(value);
        if (member && member.id !== this.self.id) next.set(member.id, member);
      }
      this.lastGood = performance.now();
      const changed = next.size !== this.live.size || [...next.keys()].some((id) => !this.live.has(id));
      this.live = next;
      if (changed) this.emit('change', this.members());
    } catch (error) {
      this.lastError = error;
    }
  }

  private async beat(): Promise<void> {
    if (this.closed) return;
    try {
      await this.redis.set(this.key(this.self.id), JSON.stringify(this.self), 'PX', MEMBER_TTL_MS);
    } catch (error) {
      this.lastError = error;
    }
  }

  private key(id: string): string {
    return `${this.prefix}member:${id}`;
  }

  /** Leaves the cluster: the key is deleted and the leave announced, so peers re-place at once. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.beatTimer);
    clearInterval(this.refreshTimer);
    await this.redis.del(this.key(this.self.id)).catch(() => undefined);
    await this.announce('leave', this.self.id).catch(() => undefined);
  }
}

function parseMember(text: string | null): Member | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Member;
    return typeof value?.id === 'string' && typeof value.url === 'string' ? { id: value.id, url: value.url } : undefined;
  } catch {
    return undefined;
  }
}
