import type { McpClient } from '../../protocol/client.js';
import type { Prompt, ProtocolEra, Tool } from '../../protocol/types.js';
import { clock, freshnessOf, isFresh, type Listing } from './freshness.js';
import { ServerRecord } from './server-record.js';
import type { CacheProblem } from './manifest-cache.js';
import { CatalogCache } from './catalog-cache.js';
import { ManifestCache } from './manifest-cache.js';
import type { ManifestStore } from './manifest-store.js';
import { type ManagedPrompt, PromptIndex } from './prompt-index.js';
import { describeClient, type ServerDescription } from './server-description.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { ToolPredicate } from './tool-filter.js';
import { type ManagedTool, ToolIndex } from './tool-index.js';

const LIST_TOOLS = { method: 'tools/list' };

/** How long a listing waits for its cache write. */
const LISTING_WRITE_WAIT_MS = 1000;

/** The ways to treat the servers' cache hints; see `ManagerOptions.cacheHints`. */
export const CACHE_HINTS_MODES = ['revalidate', 'strict', 'ignore', 'honour'] as const;
export type CacheHintsMode = (typeof CACHE_HINTS_MODES)[number];

/** How the catalog treats the servers' cache hints (2026 era). */
export interface HintOptions {
  /**
   * `"revalidate"` (default): a running server's listing past its `ttlMs` is fetched again; a
   * stopped server's is served and fetched again at its next start. `"strict"` (or its old
   * name `"honour"`): fetched again before it is served, starting the server if need be.
   * `"ignore"`: kept until invalidated, as legacy listings are.
   */
  cacheHints?: CacheHintsMode;
  /** The authorization context a server's requests go out in (a hash, '' for none): a private listing serves only its own. */
  contextOf?: (server: string) => Promise<string>;
  /** A stale listing served because it could not be fetched again. */
  onStale?: (server: string, listing: Listing, error: unknown) => void;
  /** What the client says of itself at `initialize` ({@link ManifestCache.handshakeKey}): part of every cache key. */
  handshake?: string;
  /** Where listings are kept instead of `cacheDir` (a cluster's shared store). */
  store?: ManifestStore;
}

/**
 * What the manager knows of every server's tools and prompts: the public-name indexes,
 * filled from live listings or, when there is a `cacheDir`, from the manifest cache, kept
 * in step with the servers (revalidated on start, dropped on `list_changed`), and one
 * {@link ServerRecord} per server for the rest.
 */
export class ToolCatalog {
  readonly index: ToolIndex;
  readonly prompts: PromptIndex;
  private readonly cache: CatalogCache;
  private readonly records = new Map<string, ServerRecord>();
  /** Per listing and slot (a reload may put a new slot under the same name), its re-listing in flight. */
  private readonly relisting: Record<Listing, Map<ServerSlot, Promise<void>>> = { tools: new Map(), prompts: new Map() };
  /** Slots a reload took out of the pool: a listing they finish late is not theirs to index. */
  private readonly retired = new WeakSet<ServerSlot>();
  /** Told when a server's prompts differ from what was known. */
  onPromptsChanged: (server: string) => void = () => undefined;

  constructor(
    servers: readonly string[],
    cacheDir: string | undefined,
    onCacheProblem: CacheProblem,
    private readonly onChanged: (server: string) => void,
    filters?: ReadonlyMap<string, ToolPredicate | undefined>,
    onToolProblem?: (server: string, message: string) => void,
    private readonly hints: HintOptions = {},
  ) {
    this.index = new ToolIndex(servers, filters, onToolProblem);
    this.prompts = new PromptIndex(servers);
    const store = hints.store ?? (cacheDir ? new ManifestCache(cacheDir, onCacheProblem) : undefined);
    const { index, prompts, retired } = this;
    this.cache = new CatalogCache(store, { index, prompts, retired, record: (server) => this.record(server), contextOf: hints.contextOf, handshake: hints.handshake });
  }

  /**
   * A server's tools: fresh known ones, else a fresh cache entry, else from the (started)
   * server. A listing past the lifetime its server gave it is fetched again: over the
   * running connection, or by starting the server; if that fails, the stale one is served.
   */
  toolsOf(slot: ServerSlot): Promise<ManagedTool[]> {
    return this.listingOf(slot, 'tools', () => this.index.toolsOf(slot.name), (client) =>
      slot.run((c) => c.listTools(), {}, LIST_TOOLS).then((tools) => this.listed(slot, client, tools, false)),
    );
  }

  /**
   * A call named a tool the server's cache entry lacks: the entry may be older than the
   * server's answer (another version, another handshake), so its tools are listed live,
   * once per entry. Resolves to whether they were; a live listing since makes it a no-op.
   */
  async confirmCached(slot: ServerSlot): Promise<boolean> {
    await slot.listed;
    const record = this.record(slot.name);
    if (!record.unconfirmed) return false;
    record.unconfirmed = false;
    const client = await slot.ready();
    if (this.retired.has(slot) || !this.index.toolsOf(slot.name)) return false;
    const flights = this.relisting.tools;
    let relist = flights.get(slot);
    if (!relist) {
      relist = slot
        .run((c) => c.listTools(), {}, LIST_TOOLS)
        .then((tools) => this.listed(slot, client, tools, false))
        .finally(() => flights.delete(slot));
      flights.set(slot, relist);
    }
    await relist;
    return true;
  }

  /** What is known of a server beyond its names; made on first need. */
  private record(server: string): ServerRecord {
    let record = this.records.get(server);
    if (!record) this.records.set(server, (record = new ServerRecord()));
    return record;
  }

  /** A server's prompts, as {@link toolsOf}. */
  promptsOf(slot: ServerSlot): Promise<ManagedPrompt[]> {
    return this.listingOf(slot, 'prompts', () => this.prompts.promptsOf(slot.name), (client) =>
      slot
        .run((c) => (c.capabilities.prompts ? c.listPrompts() : Promise.resolve([])))
        .then((prompts) => {
          if (this.retired.has(slot)) return;
          this.setPrompts(slot.name, prompts, client);
          this.cache.save(slot, client);
        }),
    );
  }

  /** The way to a listing `known` reads, `list` (re)fetches on the running server: see {@link toolsOf}. */
  private async listingOf<T>(slot: ServerSlot, listing: Listing, known: () => T[] | undefined, list: (client: McpClient) => Promise<void>): Promise<T[]> {
    const asked = clock();
    // A live listing on its way (a start ready on known tools) is what a caller wants.
    await slot.listed;
    let have = known();
    if (!have) {
      await this.cached(slot);
      have = known();
    }
    if (have && this.fresh(slot.name, listing, asked, isRunning(slot))) return this.once(have);
    try {
      const client = await slot.ready();
      // A reload took the slot out of the pool meanwhile: what it would list is not the pool's.
      if (this.retired.has(slot)) return [];
      if (!known() || !this.fresh(slot.name, listing, asked, true)) {
        // Running, but its list was dropped (list_changed) or is stale: list again, once for all callers.
        const flights = this.relisting[listing];
        let relist = flights.get(slot);
        if (!relist) {
          relist = list(client).finally(() => flights.delete(slot));
          flights.set(slot, relist);
        }
        await relist;
      }
    } catch (error) {
      const stale = known();
      if (!stale || this.retired.has(slot)) throw error;
      this.hints.onStale?.(slot.name, listing, error);
      return stale;
    }
    return this.once(known() ?? []);
  }

  /** The cache entry's tools of a server not running (a start lists them live). */
  private cached(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    return slot.state === 'ready' || slot.state === 'starting' ? Promise.resolve(undefined) : this.cache.load(slot);
  }

  /** May what is indexed of this listing answer a request made at `asked`, the server `running` or not? */
  private fresh(server: string, listing: Listing, asked: number, running: boolean): boolean {
    const mode = this.hints.cacheHints ?? 'revalidate';
    if (mode === 'ignore' || isFresh(this.records.get(server)?.freshness[listing], asked)) return true;
    // Most servers (the SDKs' included) answer ttlMs: 0: were a stale list to start its
    // server, every listing would start every such server. Its next real start lists again.
    return mode === 'revalidate' && !running;
  }

  /** Records a live listing's lifetime (2026 era; a legacy listing has none). */
  private heard(server: string, client: McpClient, listing: Listing): void {
    const hints = client.lastCacheHints[listing === 'tools' ? 'tools/list' : 'prompts/list'];
    this.record(server).setFreshness(listing, client.era === '2026' && hints ? freshnessOf(hints) : undefined);
  }

  /**
   * A start or a re-list saw the live tools: index them, say if they changed, and queue
   * them for the cache (never waiting for the disk: see {@link flushed}).
   */
  async listed(slot: ServerSlot, client: McpClient, tools: Tool[], withPrompts = true): Promise<void> {
    if (this.retired.has(slot)) return;
    const before = this.index.toolsOf(slot.name);
    // Only what the index took is compared and saved: a tool it refused may be too deep for JSON.stringify.
    const record = this.record(slot.name);
    record.rawTools = this.index.set(slot.name, tools);
    record.unconfirmed = false;
    this.heard(slot.name, client, 'tools');
    record.dateEra(client);
    if (this.hints.contextOf) record.context = await this.hints.contextOf(slot.name).catch(() => '');
    const after = this.index.toolsOf(slot.name) ?? [];
    if (before && JSON.stringify(before.map((t) => t.tool)) !== JSON.stringify(after.map((t) => t.tool))) this.onChanged(slot.name);
    record.description = describeClient(client);
    // Prompts are listed with the tools so the cache can answer both; a server whose
    // prompts/list fails still starts (its prompts are asked for again when needed).
    // A re-list of the tools alone (list_changed) keeps the prompts as they are.
    if (withPrompts) await this.listPrompts(slot.name, client);
    this.cache.save(slot, client);
  }

  /**
   * A listing resolves once what it wrote is on disk, so a manager made next finds it; a
   * write that never completes (a cache folder under /proc) holds it a second at most.
   */
  private async once<T>(listing: T): Promise<T> {
    await this.flushed(LISTING_WRITE_WAIT_MS);
    return listing;
  }

  /** Resolves once the cache writes queued so far are on disk, or after `ms`. Never rejects. */
  flushed(ms: number): Promise<void> {
    return this.cache.flushed(ms);
  }

  /**
   * Whether a start may be ready on the tools known already: indexed and fresh, and the
   * server is the one they were listed from (same version, same era). Its live listing
   * then follows the first calls (see {@link listed}).
   */
  knowsTools(server: string, client: McpClient): boolean {
    return (
      this.index.toolsOf(server) !== undefined && this.fresh(server, 'tools', clock(), true) && this.record(server).sameServer(client)
    );
  }

  /** The era a server spoke when last seen (this manager or the cache), for `ConnectOptions.era`; undefined: probe. */
  eraOf(server: string): ProtocolEra | undefined {
    return this.records.get(server)?.eraHint();
  }

  /** The era hint is not to be trusted any more (a start failed): the next start probes. */
  forgetEra(server: string): void {
    this.record(server).forgetEra();
  }

  /** The server's `prompts/list_changed`: forget its prompts and, while it runs, list them again. */
  promptsChanged(slot: ServerSlot): void {
    this.prompts.clear(slot.name);
    if (slot.state === 'ready') void this.promptsOf(slot).catch(() => undefined);
  }

  /**
   * What a server says about itself: from the running server, else from its last start or
   * a fresh cache entry (nothing spawned), else the server is started to ask it.
   */
  async describe(slot: ServerSlot): Promise<ServerDescription> {
    if (slot.state !== 'ready' && slot.state !== 'starting') {
      const known = this.records.get(slot.name)?.description;
      if (known) return known;
      await this.cache.load(slot);
      const cached = this.records.get(slot.name)?.description;
      if (cached) return cached;
    }
    const client = await slot.ready();
    return describeClient(client);
  }

  /** What a server said about itself at its last start, or in a fresh cache entry; never starts it. */
  async knownDescription(slot: ServerSlot): Promise<ServerDescription | undefined> {
    if (!this.records.get(slot.name)?.description && slot.state !== 'ready' && slot.state !== 'starting') await this.cache.load(slot);
    return this.records.get(slot.name)?.description;
  }

  /**
   * A server's tools if known or in a cache entry; never starts anything. A stale listing
   * counts here: a search only finds tools, and calling one starts its server, which lists again.
   */
  async peek(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    const known = this.index.toolsOf(slot.name);
    if (known) return known;
    // A running server whose list was dropped (list_changed) is asked again: a request, not a spawn.
    if (slot.state === 'ready') return this.toolsOf(slot).catch(() => undefined);
    return slot.state === 'starting' ? undefined : this.cache.load(slot);
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

  /**
   * A reload: `retired` slots leave (their servers were removed or changed, so what is known
   * of them goes with them: tools, prompts, era, description) and the indexes are named over
   * the new set of servers. Returns the servers that stay whose tools' and whose prompts'
   * public names changed.
   */
  reconfigure(
    servers: readonly string[],
    filters: ReadonlyMap<string, ToolPredicate | undefined>,
    retired: readonly ServerSlot[],
  ): { tools: string[]; prompts: string[] } {
    for (const slot of retired) {
      this.retired.add(slot);
      this.index.clear(slot.name);
      this.prompts.clear(slot.name);
      this.records.delete(slot.name);
    }
    return { tools: this.index.reconfigure(servers, filters), prompts: this.prompts.reconfigure(servers) };
  }

  /** Another cluster member saw the server's tools change: what this one knows goes, the shared store stays (its owner rewrites it). */
  forget(server: string): void {
    this.index.clear(server);
    const record = this.record(server);
    record.unconfirmed = false;
    record.rawTools = undefined;
    record.setFreshness('tools', undefined);
  }

  /** What we know of a server's tools is stale: forget it, here and on disk. */
  invalidate(server: string): void {
    this.forget(server);
    this.cache.invalidate(server);
  }

  /**
   * Prompts are listed with the tools so the cache can answer both; a server whose
   * prompts/list fails still starts (its prompts are asked for again when needed).
   */
  private async listPrompts(server: string, client: McpClient): Promise<void> {
    if (!client.capabilities.prompts) return this.setPrompts(server, [], client);
    const prompts = await client.listPrompts().catch(() => undefined);
    if (prompts) this.setPrompts(server, prompts, client);
    else this.prompts.clear(server);
  }

  private setPrompts(server: string, prompts: Prompt[], client?: McpClient): void {
    const before = this.prompts.promptsOf(server);
    this.prompts.set(server, prompts);
    if (client) this.heard(server, client, 'prompts');
    if (before && JSON.stringify(before.map((p) => p.prompt)) !== JSON.stringify(this.prompts.promptsOf(server)!.map((p) => p.prompt))) this.onPromptsChanged(server);
  }
}

/** Whether a slot's server is up or coming up: its listings come from it, not from what is known. */
function isRunning(slot: ServerSlot): boolean {
  return slot.state === 'ready' || slot.state === 'starting';
}
