import type { ConnectOptions } from '../protocol/client.js';
import type { ListChange } from './cluster-hooks.js';
import type { LogMessage } from '../protocol/types.js';
import type { PoolAuth } from './auth/auth.js';
import type { ToolCatalog } from './catalog/tool-catalog.js';
import type { ServerEntry } from './config/config.js';
import type { ManagerEvents } from './events.js';
import type { ManagerOptions } from './options.js';
import type { PlacedInstance, Placement } from './pool/placement.js';
import type { SlotHost } from './pool/server-slot.js';
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
    return {
    metrics,
    get tracing() {
      return wiring.tracing;
    },
    ...(predecessor ? { predecessor } : {}),
    connectOptions: (server): ConnectOptions => ({
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
    }),
    stateChanged: (server, from, to) => {
      if (!current()) return;
      // A failed start may come from a stale era hint (the server changed era): probe at the next one.
      if (to === 'backoff' || to === 'failed') wiring.catalog.forgetEra(server);
      wiring.emit('stateChange', { server, from, to });
    },
    // A slot a reload replaced lists for the callers it still serves, not for the index.
    toolsListed: async (server, client, tools) => {
      if (!current()) return;
      await wiring.catalog.listed(slotOf(wiring.pool, server), client, tools);
    },
    knowsTools: (server, client) => current() && wiring.catalog.knowsTools(server, client),
    relistFailed: (server, error) =>
      wiring.emit('log', { server, level: 'warning', logger: 'cache', data: `serving the known tools list: listing it live failed: ${(error as Error).message ?? error}` }),
    connected: (server, client) => {
      if (current()) wiring.subscriptions.reconnected(server, client);
    },
    auth: (server) => {
      const entry = slotOf(wiring.pool, server).entry;
      return entry.kind === 'http' ? wiring.auth.providerFor(server, entry.config) : undefined;
    },
    channels: wiring.placement.channelsFor(entry, instance),
  };
}
