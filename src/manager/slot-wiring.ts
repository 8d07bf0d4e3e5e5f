import type { ConnectOptions, McpClient } from '../protocol/client.js';
import type { ListChange } from './cluster-hooks.js';
import type { LogMessage, Tool } from '../protocol/types.js';
import type { OAuthProvider } from '../transport/http/oauth/provider-types.js';
import type { PoolAuth } from './auth/auth.js';
import type { ToolCatalog } from './catalog/tool-catalog.js';
import type { ServerEntry } from './config/config.js';
import type { ManagerEvents } from './events.js';
import type { ManagerOptions } from './options.js';
import type { PlacedInstance, Placement } from './pool/placement.js';
import type { SlotHost } from './pool/server-slot.js';
import type { ChannelFactory } from './pool/channel-factory.js';
import type { ServerState } from './pool/slot-state.js';
import { type HostRouter, validateElicitation } from './scope/host-handlers.js';
import { type PoolState, slotOf } from './scope/pool-state.js';
import type { Subscriptions } from './scope/subscriptions.js';
import type { MetricsRecorder } from './telemetry/metrics.js';
import type { Tracing } from './telemetry/tracing.js';
import { sessionOf } from './principals/principal-scope.js';

/** What the slots' wiring needs of the manager. */
export interface SlotWiring {
  readonly options: ManagerOptions;
  readonly router: HostRouter;
  readonly catalog: ToolCatalog;
  readonly pool: PoolState;
  readonly subscriptions: Subscriptions;
  readonly auth: PoolAuth;
  /** Where each server runs: in this process, or (with `shared`) the stdio ones in the pool daemon. */
  readonly placement: Placement;
  readonly tracing: Tracing | undefined;
  emit<E extends keyof ManagerEvents>(event: E, payload: ManagerEvents[E]): void;
  /** In a cluster: a list change this member saw, for every other member. */
  tellCluster?(event: ListChange): void;
}

/**
 * What a slot reports to, and asks of, its manager: its connection's options, its events
 * and listings, its OAuth provider, the channel factory the placement picks for `entry`.
 * `current`: whether the slot is still the pool's (a reload may have replaced it).
 */
export function slotHost(wiring: SlotWiring, entry: ServerEntry, current: () => boolean, metrics: MetricsRecorder, predecessor?: Promise<void>, instance?: PlacedInstance): SlotHost {
  return new WiredSlotHost(wiring, current, metrics, predecessor, wiring.placement.channelsFor(entry, instance));
}

// A class, not an object of closures: every configured server has one from the start, and
// a dozen closures each cost ~1.4 KB a server, which a fresh process constructing hundreds
// of servers pays in scavenges (issue 34).
class WiredSlotHost implements SlotHost {
  constructor(
    private readonly wiring: SlotWiring,
    private readonly current: () => boolean,
    readonly metrics: MetricsRecorder,
    readonly predecessor: Promise<void> | undefined,
    readonly channels: ChannelFactory,
  ) {}

  get tracing(): Tracing | undefined {
    return this.wiring.tracing;
  }

  connectOptions(server: string): ConnectOptions {
    const { wiring, current } = this;
    return {
      name: server,
      clientInfo: wiring.options.clientInfo,
      roots: wiring.options.roots,
      handlers: wiring.router.connectionHandlers(),
      capabilities: wiring.options.capabilities,
      validateElicitation,
      maxMessageBytes: wiring.options.maxMessageBytes,
      shutdownGraceMs: wiring.options.shutdownGraceMs,
      era: wiring.catalog.eraOf(server),
      listeners: {
        stderr: (line) => wiring.emit('stderr', { server, line }),
        log: ({ level, logger, data }: LogMessage) => wiring.emit('log', { server, level, ...(logger === undefined ? {} : { logger }), data }),
        noise: (line) => wiring.emit('log', { server, level: 'warning', logger: 'stdout', data: `skipped a non-JSON line on stdout: ${line}` }),
        exit: (status, reason) =>
          wiring.emit('exit', { server, ...status, ...(reason && reason.code !== 'closed' ? { error: reason } : {}) }),
        toolsChanged: () => {
          if (!current()) return;
          wiring.catalog.changed(slotOf(wiring.pool, server));
          wiring.emit('toolsChanged', { server });
          wiring.tellCluster?.({ type: 'tools', server });
        },
        promptsChanged: () => {
          wiring.catalog.promptsChanged(slotOf(wiring.pool, server));
          wiring.emit('promptsChanged', { server });
          wiring.tellCluster?.({ type: 'prompts', server });
        },
        resourcesChanged: () => {
          wiring.emit('resourcesChanged', { server });
          wiring.tellCluster?.({ type: 'resources', server });
        },
        resourceUpdated: (uri) => wiring.subscriptions.updated(server, uri),
        unrouted: (method, callers) => wiring.emit('unrouted', { server, method, sessions: callers.map((caller) => sessionOf(caller) ?? 'manager') }),
      },
    };
  }

  stateChanged(server: string, from: ServerState, to: ServerState): void {
    if (!this.current()) return;
    // A failed start may come from a stale era hint (the server changed era): probe at the next one.
    if (to === 'backoff' || to === 'failed') this.wiring.catalog.forgetEra(server);
    this.wiring.emit('stateChange', { server, from, to });
  }

  // A slot a reload replaced lists for the callers it still serves, not for the index.
  async toolsListed(server: string, client: McpClient, tools: Tool[]): Promise<void> {
    if (!this.current()) return;
    await this.wiring.catalog.listed(slotOf(this.wiring.pool, server), client, tools);
  }

  knowsTools(server: string, client: McpClient): boolean {
    return this.current() && this.wiring.catalog.knowsTools(server, client);
  }

  relistFailed(server: string, error: unknown): void {
    this.wiring.emit('log', { server, level: 'warning', logger: 'cache', data: `serving the known tools list: listing it live failed: ${(error as Error).message ?? error}` });
  }

  connected(server: string, client: McpClient): void {
    if (this.current()) this.wiring.subscriptions.reconnected(server, client);
  }

  auth(server: string): OAuthProvider | undefined {
    const entry = slotOf(this.wiring.pool, server).entry;
    return entry.kind === 'http' ? this.wiring.auth.providerFor(server, entry.config) : undefined;
  }
}
