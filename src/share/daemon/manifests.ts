import type { ManifestEntry } from '../../manager/catalog/manifest-cache.js';
import { ManifestCache } from '../../manager/catalog/manifest-cache.js';
import { describeClient, type ServerDescription } from '../../manager/catalog/server-description.js';
import type { McpClient } from '../../protocol/client.js';
import type { Prompt, Tool } from '../../protocol/types.js';

/** What the daemon knows of a server it is not running: enough to answer a session's handshake and listings. */
export interface KnownServer {
  description: ServerDescription;
  tools: Tool[];
  /** Absent when they were never listed. */
  prompts?: Prompt[];
}

/**
 * The daemon's manifest cache: what each server fingerprint answered at its last start
 * (its handshake, tools and prompts), on disk in the daemon's private folder, so that a
 * client's first listing of a known entry starts nothing, whatever that client's own
 * state or cache folder. Keyed by the fingerprint, which holds all a listing depends on
 * (the entry after expansion, the client's `clientInfo` and declared capabilities): the
 * file format, checks and atomic writes are the manager's {@link ManifestCache}.
 */
export class DaemonManifests {
  private readonly cache: ManifestCache;

  constructor(dir: string, log: (line: string) => void) {
    this.cache = new ManifestCache(dir, (_fp, message, error) => log(error ? `${message}: ${(error as Error).message ?? String(error)}` : message));
  }

  /** The entry of `fp`, or undefined (unknown, corrupt, refused). */
  async load(fp: string): Promise<KnownServer | undefined> {
    const entry: ManifestEntry | undefined = await this.cache.load(fp, fp);
    if (!entry?.description) return undefined;
    return { description: entry.description, tools: entry.tools, ...(entry.prompts ? { prompts: entry.prompts } : {}) };
  }

  /** Queues what the running server told; returns at once. */
  save(fp: string, client: McpClient, known: Omit<KnownServer, 'description'>): void {
    this.cache.save(fp, fp, client.serverInfo.version, known.tools, {
      era: client.era,
      eraCheckedAt: new Date().toISOString(),
      description: describeClient(client),
      ...(known.prompts ? { prompts: known.prompts } : {}),
    });
  }

  /** Resolves once the writes queued so far are done, or after `ms`. */
  flushed(ms: number): Promise<void> {
    return this.cache.flushed(ms);
  }
}
