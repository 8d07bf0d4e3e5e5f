import type { McpClient } from '../../protocol/client.js';
import type { Listing } from './freshness.js';
import { type ManifestEntry, ManifestCache } from './manifest-cache.js';
import type { ManifestStore } from './manifest-store.js';
import type { PromptIndex } from './prompt-index.js';
import { describeClient } from './server-description.js';
import type { ServerRecord } from './server-record.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { ManagedTool, ToolIndex } from './tool-index.js';

/** The parts of the catalog its cache reads into and writes from. */
export interface CatalogParts {
  readonly index: ToolIndex;
  readonly prompts: PromptIndex;
  /** What is known of a server beyond its names; made on first need. */
  record(server: string): ServerRecord;
  /** Slots a reload took out of the pool: what they would read is not theirs to index. */
  readonly retired: WeakSet<ServerSlot>;
  /** The authorization context a server's requests go out in (a hash, '' for none). */
  readonly contextOf?: (server: string) => Promise<string>;
  /** What the client says of itself at `initialize`: part of every cache key. */
  readonly handshake?: string;
}

/**
 * The catalog's side of the manifest store: a server's record and indexes built from its
 * cache entry, and written back from a live listing. Without a store it knows nothing and
 * keeps nothing.
 */
export class CatalogCache {
  constructor(
    private readonly store: ManifestStore | undefined,
    private readonly parts: CatalogParts,
  ) {}

  /** The server's tools from its cache entry, indexed (with its prompts and description) unless known better already. */
  async load(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    if (!this.store) return undefined;
    const entry = await this.store.load(slot.name, this.keyOf(slot));
    if (entry && !this.parts.retired.has(slot)) {
      this.parts.record(slot.name).adoptEra(entry);
      await this.fromEntry(slot.name, entry);
    }
    return this.parts.index.toolsOf(slot.name);
  }

  /** Writes what is known of a running server; with its tools unknown there is nothing whole to write. */
  save(slot: ServerSlot, client: McpClient): void {
    const { index, prompts: promptIndex } = this.parts;
    const tools = index.toolsOf(slot.name);
    if (!this.store || !tools) return;
    // The index keeps only the tools the config lets through; the cache keeps what the server listed.
    const record = this.parts.record(slot.name);
    const raw = record.rawTools ?? tools.map((t) => t.tool);
    const prompts = promptIndex.promptsOf(slot.name)?.map((p) => p.prompt);
    const { freshness, context } = record;
    this.store.save(slot.name, this.keyOf(slot), client.serverInfo.version, raw, {
      era: client.era,
      eraCheckedAt: new Date(record.eraChecked).toISOString(),
      ...(prompts ? { prompts } : {}),
      description: describeClient(client),
      ...(Object.keys(freshness).length > 0 ? { freshness: { ...freshness } } : {}),
      ...(context ? { context } : {}),
    });
  }

  /** Queues the removal of the server's entries. */
  invalidate(server: string): void {
    this.store?.invalidate(server);
  }

  /** Resolves once the writes queued so far are kept, or after `ms`. Never rejects. */
  flushed(ms: number): Promise<void> {
    return this.store ? this.store.flushed(ms) : Promise.resolve();
  }

  /**
   * The listings and description of a cache entry, unless a start already knows better (it
   * may have listed live while the file was read). A private listing made in another
   * authorization context (another token) is not this one's to serve.
   */
  private async fromEntry(server: string, entry: ManifestEntry): Promise<void> {
    const { index, prompts } = this.parts;
    const freshness = entry.freshness ?? {};
    const privateOnes = (['tools', 'prompts'] as const).filter((l) => freshness[l]?.scope === 'private');
    const foreign = privateOnes.length > 0 && (entry.context ?? '') !== (await this.contextNow(server));
    const usable = (listing: Listing) => !(foreign && freshness[listing]?.scope === 'private');
    const record = this.parts.record(server);
    if (!index.toolsOf(server) && usable('tools')) {
      // As for a live listing, what is kept to save again is what the index took.
      record.rawTools = index.set(server, entry.tools);
      record.unconfirmed = true;
      record.setFreshness('tools', freshness.tools);
    }
    if (entry.prompts && !prompts.promptsOf(server) && usable('prompts')) {
      prompts.set(server, entry.prompts);
      record.setFreshness('prompts', freshness.prompts);
    }
    record.description ??= entry.description;
  }

  private contextNow(server: string): Promise<string> {
    return this.parts.contextOf ? this.parts.contextOf(server).catch(() => '\0unknown') : Promise.resolve('');
  }

  private keyOf(slot: ServerSlot): string {
    const record = this.parts.record(slot.name);
    return (record.cacheKey ??= 'config' in slot.entry ? ManifestCache.keyOf(slot.entry.config, this.parts.handshake) : '');
  }
}
