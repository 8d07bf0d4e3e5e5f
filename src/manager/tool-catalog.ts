import type { McpClient } from '../protocol/client.js';
import type { ProtocolEra, Tool } from '../protocol/types.js';
import type { CacheProblem } from './manifest-cache.js';
import { ManifestCache } from './manifest-cache.js';
import type { ServerSlot } from './server-slot.js';
import type { ToolPredicate } from './tool-filter.js';
import { type ManagedTool, ToolIndex } from './tool-index.js';

/**
 * What the manager knows of every server's tools: the public-name index, filled from
 * live listings or, when there is a `cacheDir`, from the manifest cache, kept in step
 * with the servers (revalidated on start, dropped on `list_changed`).
 */
export class ToolCatalog {
  readonly index: ToolIndex;
  private readonly cache: ManifestCache | undefined;
  private readonly cacheKeys = new Map<string, string>();
  private readonly relisting = new Map<string, Promise<void>>();
  /** The era each server was last seen to speak (live, or from its cache entry): the next start's hint. */
  private readonly eras = new Map<string, ProtocolEra>();
  /** Servers whose era hint failed a start: their cache entry's era is not used until a start lists them again. */
  private readonly distrusted = new Set<string>();

  constructor(
    servers: readonly string[],
    cacheDir: string | undefined,
    onCacheProblem: CacheProblem,
    private readonly onChanged: (server: string) => void,
    filters?: ReadonlyMap<string, ToolPredicate | undefined>,
    onDuplicate?: (server: string, tool: string) => void,
  ) {
    this.index = new ToolIndex(servers, filters, onDuplicate);
    this.cache = cacheDir ? new ManifestCache(cacheDir, onCacheProblem) : undefined;
  }

  /** A server's tools: known ones, else a fresh cache entry, else from the (started) server. */
  async toolsOf(slot: ServerSlot): Promise<ManagedTool[]> {
    const known = this.index.toolsOf(slot.name);
    if (known) return known;
    if (slot.state !== 'ready' && slot.state !== 'starting') {
      const cached = await this.fromCache(slot);
      if (cached) return cached;
    }
    const client = await slot.ready();
    if (!this.index.toolsOf(slot.name)) {
      // Running, but its list was dropped (list_changed): list again, once for all callers.
      let relist = this.relisting.get(slot.name);
      if (!relist) {
        relist = slot
          .run((c) => c.listTools())
          .then((tools) => this.listed(slot, client, tools))
          .finally(() => this.relisting.delete(slot.name));
        this.relisting.set(slot.name, relist);
      }
      await relist;
    }
    return this.index.toolsOf(slot.name) ?? [];
  }

  /**
   * A start or a re-list saw the live tools: index them, say if they changed, and save
   * them; resolves once they are on disk, so a manager created next finds them.
   */
  async listed(slot: ServerSlot, client: McpClient, tools: Tool[]): Promise<void> {
    const before = this.index.toolsOf(slot.name);
    this.index.set(slot.name, tools);
    this.eras.set(slot.name, client.era);
    this.distrusted.delete(slot.name);
    if (before && JSON.stringify(before.map((t) => t.tool)) !== JSON.stringify(this.index.visible(slot.name, tools))) this.onChanged(slot.name);
    await this.cache?.save(slot.name, this.keyOf(slot), client.serverInfo.version, tools, client.era);
  }

  /** The era a server spoke when last seen (this manager or the cache), for `ConnectOptions.era`; undefined: probe. */
  eraOf(server: string): ProtocolEra | undefined {
    return this.eras.get(server);
  }

  /** The era hint is not to be trusted any more (a start failed): the next start probes. */
  forgetEra(server: string): void {
    this.eras.delete(server);
    this.distrusted.add(server);
  }

  /** A server's tools if known or in a fresh cache entry; never starts anything. */
  async peek(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    const known = this.index.toolsOf(slot.name);
    if (known) return known;
    // A running server whose list was dropped (list_changed) is asked again: a request, not a spawn.
    if (slot.state === 'ready') return this.toolsOf(slot).catch(() => undefined);
    return slot.state === 'starting' ? undefined : this.fromCache(slot);
  }

  /**
   * The server said its tools changed (`list_changed`): forget what we know and, while it
   * runs, list again so the cache holds the new tools instead of losing its entry (some
   * servers send this right after `initialize`, which would make every new manager spawn them).
   */
  changed(slot: ServerSlot): void {
    this.invalidate(slot.name);
    if (slot.state === 'ready') void this.toolsOf(slot).catch(() => undefined);
  }

  /** What we know of a server's tools is stale: forget it, here and on disk. */
  invalidate(server: string): void {
    this.index.clear(server);
    void this.cache?.invalidate(server);
  }

  private async fromCache(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    if (!this.cache) return undefined;
    const entry = await this.cache.load(slot.name, this.keyOf(slot));
    // A start may have listed the live tools while the file was being read; they win.
    if (entry && !this.index.toolsOf(slot.name)) this.index.set(slot.name, entry.tools);
    if (entry?.era && !this.eras.has(slot.name) && !this.distrusted.has(slot.name)) this.eras.set(slot.name, entry.era);
    return this.index.toolsOf(slot.name);
  }

  private keyOf(slot: ServerSlot): string {
    let key = this.cacheKeys.get(slot.name);
    if (key === undefined) {
      key = 'config' in slot.entry ? ManifestCache.keyOf(slot.entry.config) : '';
      this.cacheKeys.set(slot.name, key);
    }
    return key;
  }
}
