import { DEFAULT_CLIENT_INFO } from '../protocol/client.js';
import { InstancedSlot } from './principals/instanced-slot.js';
import type { PoolAuth } from './auth/auth.js';
import type { ServerEntry } from './config/config.js';
import { ManifestCache } from './catalog/manifest-cache.js';
import type { ManifestStore } from './catalog/manifest-store.js';
import { ToolCatalog } from './catalog/tool-catalog.js';
import type { ManagerEvents } from './events.js';
import type { ManagerOptions } from './options.js';
import type { ServerSlot } from './pool/server-slot.js';
import { filtersOf } from './slot-table.js';

/** What the pool's catalog reports to and asks of the manager that owns it. */
export interface CatalogHost {
  emit<K extends keyof ManagerEvents>(event: K, payload: ManagerEvents[K]): void;
  slot(server: string): ServerSlot | undefined;
  readonly auth: PoolAuth;
  /** The host-request methods a connection declares: part of the handshake the cache is keyed by. */
  readonly handlers: readonly string[];
  /** The cluster's shared manifests, when the manager is a member of one. */
  readonly store?: ManifestStore;
}

/** The catalog of a manager's servers: their tool and prompt names, the manifest cache, its problems told as `log` events. */
export function poolCatalog(entries: readonly ServerEntry[], options: ManagerOptions, host: CatalogHost): ToolCatalog {
  const warn = (server: string, logger: string, data: string) => host.emit('log', { server, level: 'warning', logger, data });
  const catalog = new ToolCatalog(
    entries.map((entry) => entry.name),
    options.cacheDir,
    (server, message, error) => warn(server, 'cache', error ? `${message}: ${(error as Error).message ?? error}` : message),
    (server) => host.emit('toolsChanged', { server }),
    filtersOf(entries),
    (server, message) => warn(server, 'tools', message),
    {
      cacheHints: options.cacheHints,
      contextOf: async (server) => {
        const slot = host.slot(server);
        // A list the server marks private serves only the principal (or session) it was made for.
        if (slot instanceof InstancedSlot) return slot.context();
        const entry = slot?.entry;
        return (entry?.kind === 'http' && (await host.auth.providerFor(server, entry.config)?.context())) || '';
      },
      onStale: (server, listing, error) => warn(server, 'cache', `serving the stale ${listing} list: listing again failed: ${(error as Error).message ?? error}`),
      handshake: ManifestCache.handshakeKey(options.clientInfo ?? DEFAULT_CLIENT_INFO, host.handlers),
      ...(host.store ? { store: host.store } : {}),
    },
  );
  catalog.onPromptsChanged = (server) => host.emit('promptsChanged', { server });
  return catalog;
}
