import type { Tool } from '../../protocol/types.js';
import type { ManifestEntry, ManifestExtras } from './manifest-cache.js';

/**
 * Where the catalog keeps servers' listings between runs: a folder ({@link ManifestCache}),
 * or a store every member of a cluster shares (Redis). None of these throws at its caller.
 */
export interface ManifestStore {
  /** The fresh entry for this server and key, or undefined (missing, stale, refused, corrupt, unreachable). */
  load(server: string, key: string): Promise<ManifestEntry | undefined>;
  /** Queues the entry to be kept; returns at once. */
  save(server: string, key: string, serverVersion: string, tools: Tool[], extras?: ManifestExtras): void;
  /** Queues the removal of the server's entries; returns at once. */
  invalidate(server: string): void;
  /** Resolves once queued changes are kept, or after `ms`. Never rejects. */
  flushed(ms: number): Promise<void>;
}
