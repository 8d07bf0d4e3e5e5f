import type { ConnectOptions } from '../protocol/client.js';
import type { TokenStore } from '../transport/http/oauth/token-store.js';
// Types only: the cluster's code (Redis, the owner endpoint) loads on the first join, never without `cluster`.
import type { ClusterEvent, ClusterMember } from '../share/cluster/member.js';
import type { ClusterOptions } from '../share/cluster/options.js';
import type { ResolvedServer } from './config/config.js';
import type { ManifestStore } from './catalog/manifest-store.js';
import type { ManagerEvents } from './events.js';
import { type PoolState, slotOf } from './scope/pool-state.js';

/** A change of one server's lists, for every other member. */
export type ListChange = { type: 'tools' | 'prompts' | 'resources'; server: string };

/** What the cluster hooks need of their manager. */
export interface ClusterHost {
  readonly pool: PoolState;
  /** The stdio servers of the config, with the options each connects with. */
  servers(): Iterable<{ name: string; config: ResolvedServer; options: ConnectOptions }>;
  /** Applies a config another member applied. */
  reload(config: unknown): Promise<unknown>;
  emit<E extends keyof ManagerEvents>(event: E, payload: ManagerEvents[E]): void;
}

/**
 * The manager as a member of its cluster (`cluster` option): the join on first need, the
 * shared stores usable before it, and the events members tell each other (list changes,
 * reloads). Made only with `cluster`.
 */
export class ClusterHooks {
  private member: Promise<ClusterMember> | undefined;
  /** Set while a reload another member published is applied: it is not published again. */
  private fromCluster = false;

  constructor(
    private readonly options: ClusterOptions,
    private readonly host: ClusterHost,
  ) {}

  /** Joins on the first call: Redis connected, the internal endpoint served, the heartbeat started. */
  join(): Promise<ClusterMember> {
    this.member ??= (async () => {
      const [{ ClusterMember }, { resolveCluster }] = await Promise.all([import('../share/cluster/member.js'), import('../share/cluster/options.js')]);
      return ClusterMember.start(resolveCluster(this.options), {
        servers: () => this.host.servers(),
        remote: (event) => this.heard(event),
        log: (message) => this.log(message),
      });
    })();
    return this.member;
  }

  /** The shared stores, usable before the member has joined: each call waits for it. */
  stores(): { manifests: ManifestStore; tokens: TokenStore } {
    const member = () => this.join();
    return {
      manifests: {
        load: (server, key) => member().then((m) => m.manifests.load(server, key), () => undefined),
        save: (...args) => void member().then((m) => m.manifests.save(...args), () => undefined),
        invalidate: (server) => void member().then((m) => m.manifests.invalidate(server), () => undefined),
        flushed: (ms) => (this.member ? this.member.then((m) => m.manifests.flushed(ms), () => undefined) : Promise.resolve()),
      },
      tokens: {
        get: (key) => member().then((m) => m.tokens.get(key)),
        set: (key, value) => member().then((m) => m.tokens.set(key, value)),
        delete: (key) => member().then((m) => m.tokens.delete(key)),
      },
    };
  }

  /** A list change this member saw, for every other member (once joined). */
  tell(event: ListChange): void {
    void this.member?.then((m) => m.publish({ ...event, from: m.id }), () => undefined);
  }

  /** A reload applied here, for every other member to apply (each expanding its own environment); not one it heard from them. */
  reloaded(report: Promise<unknown>, config: unknown): void {
    if (!this.fromCluster) void report.then(() => this.member?.then((m) => m.publish({ type: 'reload', config, from: m.id })), () => undefined);
  }

  /** Leaves the cluster if joined: the servers this member owns stop (peers re-place them at once). */
  async close(): Promise<void> {
    await this.member?.then((m) => m.close(), () => undefined);
  }

  /** Another member saw a list change, or applied a config: this one follows. */
  private heard(event: ClusterEvent): void {
    if (event.type === 'reload') {
      // Only this call is not published again: reload reads the flag before it returns, so a
      // reload of this member's own made while this one applies is still told to the others.
      this.fromCluster = true;
      let applying: Promise<unknown>;
      try {
        applying = this.host.reload(event.config);
      } finally {
        this.fromCluster = false;
      }
      void applying.catch((error: unknown) => this.log(`a config another member applied does not apply here: ${(error as Error).message}`));
      return;
    }
    const { pool } = this.host;
    if (!('server' in event) || !pool.slots.has(event.server)) return;
    const slot = slotOf(pool, event.server);
    if (event.type === 'tools') {
      pool.catalog.forget(slot.name);
      this.host.emit('toolsChanged', { server: slot.name });
    } else if (event.type === 'prompts') {
      pool.catalog.promptsChanged(slot);
      this.host.emit('promptsChanged', { server: slot.name });
    } else this.host.emit('resourcesChanged', { server: slot.name });
  }

  private log(message: string): void {
    this.host.emit('log', { server: '', level: 'warning', logger: 'cluster', data: message });
  }
}
