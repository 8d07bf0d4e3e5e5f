import type { McpClient } from '../../protocol/client.js';
import type { Prompt, ProtocolEra, Tool } from '../../protocol/types.js';
import { clock, type Freshness, freshnessOf, isFresh, type Listing, type ListingFreshness } from './freshness.js';
import type { CacheProblem, ManifestEntry } from './manifest-cache.js';
import { ManifestCache } from './manifest-cache.js';
import { type ManagedPrompt, PromptIndex } from './prompt-index.js';
import { describeClient, type ServerDescription } from './server-description.js';
import type { ServerSlot } from '../pool/server-slot.js';
import type { ToolPredicate } from './tool-filter.js';
import { type ManagedTool, ToolIndex } from './tool-index.js';

const LIST_TOOLS = { method: 'tools/list' };

/**
 * What the manager knows of every server's tools: the public-name index, filled from
 * live listings or, when there is a `cacheDir`, from the manifest cache, kept in step
 * with the servers (revalidated on start, dropped on `list_changed`).
 */
/** How long a listing waits for its cache write. */
const LISTING_WRITE_WAIT_MS = 1000;

/** How long an era found by probing is trusted before the next start probes again (a week). */
export const ERA_VERDICT_MAX_AGE_MS = 7 * 24 * 3600_000;

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
}

export class ToolCatalog {
  readonly index: ToolIndex;
  readonly prompts: PromptIndex;
  private readonly cache: ManifestCache | undefined;
  private readonly cacheKeys = new Map<string, string>();
  /** Per listing and slot (a reload may put a new slot under the same name), its re-listing in flight. */
  private readonly relisting: Record<Listing, Map<ServerSlot, Promise<void>>> = { tools: new Map(), prompts: new Map() };
  /** Slots a reload took out of the pool: a listing they finish late is not theirs to index. */
  private readonly retired = new WeakSet<ServerSlot>();
  /** The era each server was last seen to speak (live, or from its cache entry): the next start's hint. */
  private readonly eras = new Map<string, ProtocolEra>();
  /** When each server's era was last found by probing (ms since the epoch); 0: to probe again. */
  private readonly eraChecked = new Map<string, number>();
  /** The server version each era verdict was made with: another version is probed again. */
  private readonly versions = new Map<string, string>();
  private readonly dated = new WeakSet<McpClient>();
  /** Servers whose era hint failed a start: their cache entry's era is not used until a start lists them again. */
  private readonly distrusted = new Set<string>();
  /** Each server's tools as it listed them, before the config's filter: what the cache keeps. */
  private readonly rawTools = new Map<string, Tool[]>();
  /** What each server said about itself at its last start (or in its cache entry). */
  private readonly descriptions = new Map<string, ServerDescription>();
  /** The lifetimes the servers gave what is indexed of them. */
  private readonly freshness = new Map<string, ListingFreshness>();
  /** The authorization context of each server's last live listing. */
  private readonly contexts = new Map<string, string>();
  /** Servers whose indexed tools came from a cache entry no live listing of this manager has confirmed. */
  private readonly unconfirmed = new Set<string>();
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
    this.cache = cacheDir ? new ManifestCache(cacheDir, onCacheProblem) : undefined;
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
    if (!this.unconfirmed.has(slot.name)) return false;
    this.unconfirmed.delete(slot.name);
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

  /** A server's prompts, as {@link toolsOf}. */
  promptsOf(slot: ServerSlot): Promise<ManagedPrompt[]> {
    return this.listingOf(slot, 'prompts', () => this.prompts.promptsOf(slot.name), (client) =>
      slot
        .run((c) => (c.capabilities.prompts ? c.listPrompts() : Promise.resolve([])))
        .then((prompts) => {
          if (this.retired.has(slot)) return;
          this.setPrompts(slot.name, prompts, client);
          this.save(slot, client);
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
    return slot.state === 'ready' || slot.state === 'starting' ? Promise.resolve(undefined) : this.fromCache(slot);
  }

  /** May what is indexed of this listing answer a request made at `asked`, the server `running` or not? */
  private fresh(server: string, listing: Listing, asked: number, running: boolean): boolean {
    const mode = this.hints.cacheHints ?? 'revalidate';
    if (mode === 'ignore' || isFresh(this.freshness.get(server)?.[listing], asked)) return true;
    // Most servers (the SDKs' included) answer ttlMs: 0: were a stale list to start its
    // server, every listing would start every such server. Its next real start lists again.
    return mode === 'revalidate' && !running;
  }

  /** Records a live listing's lifetime (2026 era; a legacy listing has none). */
  private heard(server: string, client: McpClient, listing: Listing): void {
    const hints = client.lastCacheHints[listing === 'tools' ? 'tools/list' : 'prompts/list'];
    this.setFreshness(server, listing, client.era === '2026' && hints ? freshnessOf(hints) : undefined);
  }

  /** Sets (or, with none, drops) the lifetime of one of a server's listings. */
  private setFreshness(server: string, listing: Listing, freshness: Freshness | undefined): void {
    const known = { ...this.freshness.get(server) };
    if (freshness) known[listing] = freshness;
    else delete known[listing];
    this.freshness.set(server, known);
  }

  /**
   * A start or a re-list saw the live tools: index them, say if they changed, and queue
   * them for the cache (never waiting for the disk: see {@link flushed}).
   */
  async listed(slot: ServerSlot, client: McpClient, tools: Tool[], withPrompts = true): Promise<void> {
    if (this.retired.has(slot)) return;
    const before = this.index.toolsOf(slot.name);
    // Only what the index took is compared and saved: a tool it refused may be too deep for JSON.stringify.
    const taken = this.index.set(slot.name, tools);
    this.rawTools.set(slot.name, taken);
    this.unconfirmed.delete(slot.name);
    this.heard(slot.name, client, 'tools');
    this.dateEra(slot.name, client);
    if (this.hints.contextOf) this.contexts.set(slot.name, await this.hints.contextOf(slot.name).catch(() => ''));
    this.distrusted.delete(slot.name);
    const after = this.index.toolsOf(slot.name) ?? [];
    if (before && JSON.stringify(before.map((t) => t.tool)) !== JSON.stringify(after.map((t) => t.tool))) this.onChanged(slot.name);
    this.descriptions.set(slot.name, describeClient(client));
    // Prompts are listed with the tools so the cache can answer both; a server whose
    // prompts/list fails still starts (its prompts are asked for again when needed).
    // A re-list of the tools alone (list_changed) keeps the prompts as they are.
    if (withPrompts) await this.listPrompts(slot.name, client);
    this.save(slot, client);
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
    return this.cache ? this.cache.flushed(ms) : Promise.resolve();
  }

  /**
   * Whether a start may be ready on the tools known already: indexed and fresh, and the
   * server is the one they were listed from (same version, same era). Its live listing
   * then follows the first calls (see {@link listed}).
   */
  knowsTools(server: string, client: McpClient): boolean {
    return (
      this.index.toolsOf(server) !== undefined &&
      this.fresh(server, 'tools', clock(), true) &&
      this.eras.get(server) === client.era &&
      this.versions.get(server) === client.serverInfo.version &&
      !this.distrusted.has(server)
    );
  }

  /** The era a server spoke when last seen (this manager or the cache), for `ConnectOptions.era`; undefined: probe. */
  eraOf(server: string): ProtocolEra | undefined {
    return Date.now() - (this.eraChecked.get(server) ?? 0) < ERA_VERDICT_MAX_AGE_MS ? this.eras.get(server) : undefined;
  }

  /**
   * Dates a started server's era: found by probing now, or kept from the verdict its start
   * trusted, unless the server's version changed since (then the next start probes).
   */
  private dateEra(server: string, client: McpClient): void {
    // Once per start: a later re-list of the same connection probed nothing.
    if (this.dated.has(client)) return;
    this.dated.add(client);
    const hinted = this.eraOf(server) === client.era && !this.distrusted.has(server);
    const sameVersion = this.versions.get(server) === client.serverInfo.version;
    if (!hinted) this.eraChecked.set(server, Date.now());
    else if (!sameVersion) this.eraChecked.set(server, 0);
    if (!hinted || sameVersion) this.versions.set(server, client.serverInfo.version);
    this.eras.set(server, client.era);
  }

  /** The era hint is not to be trusted any more (a start failed): the next start probes. */
  forgetEra(server: string): void {
    this.eras.delete(server);
    this.distrusted.add(server);
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
      const known = this.descriptions.get(slot.name);
      if (known) return known;
      await this.fromCache(slot);
      const cached = this.descriptions.get(slot.name);
      if (cached) return cached;
    }
    const client = await slot.ready();
    return describeClient(client);
  }

  /** What a server said about itself at its last start, or in a fresh cache entry; never starts it. */
  async knownDescription(slot: ServerSlot): Promise<ServerDescription | undefined> {
    if (!this.descriptions.has(slot.name) && slot.state !== 'ready' && slot.state !== 'starting') await this.fromCache(slot);
    return this.descriptions.get(slot.name);
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
      for (const known of [this.cacheKeys, this.rawTools, this.freshness, this.contexts, this.descriptions, this.eras, this.eraChecked, this.versions]) known.delete(slot.name);
      this.distrusted.delete(slot.name);
      this.unconfirmed.delete(slot.name);
    }
    return { tools: this.index.reconfigure(servers, filters), prompts: this.prompts.reconfigure(servers) };
  }

  /** What we know of a server's tools is stale: forget it, here and on disk. */
  invalidate(server: string): void {
    this.index.clear(server);
    this.unconfirmed.delete(server);
    this.rawTools.delete(server);
    this.setFreshness(server, 'tools', undefined);
    this.cache?.invalidate(server);
  }

  private async fromCache(slot: ServerSlot): Promise<ManagedTool[] | undefined> {
    if (!this.cache) return undefined;
    const entry = await this.cache.load(slot.name, this.keyOf(slot));
    if (entry?.era && !this.eras.has(slot.name) && !this.distrusted.has(slot.name)) {
      this.eras.set(slot.name, entry.era);
      this.eraChecked.set(slot.name, Date.parse(entry.eraCheckedAt ?? entry.savedAt) || 0);
      this.versions.set(slot.name, entry.serverVersion);
    }
    if (entry && !this.retired.has(slot)) await this.fromEntry(slot.name, entry);
    return this.index.toolsOf(slot.name);
  }

  /**
   * The listings and description of a cache entry, unless a start already knows better (it
   * may have listed live while the file was read). A private listing made in another
   * authorization context (another token) is not this one's to serve.
   */
  private async fromEntry(server: string, entry: ManifestEntry): Promise<void> {
    const freshness = entry.freshness ?? {};
    const privateOnes = (['tools', 'prompts'] as const).filter((l) => freshness[l]?.scope === 'private');
    const foreign = privateOnes.length > 0 && (entry.context ?? '') !== (await this.contextNow(server));
    const usable = (listing: Listing) => !(foreign && freshness[listing]?.scope === 'private');
    if (!this.index.toolsOf(server) && usable('tools')) {
      // As for a live listing, what is kept to save again is what the index took.
      this.rawTools.set(server, this.index.set(server, entry.tools));
      this.unconfirmed.add(server);
      this.setFreshness(server, 'tools', freshness.tools);
    }
    if (entry.prompts && !this.prompts.promptsOf(server) && usable('prompts')) {
      this.prompts.set(server, entry.prompts);
      this.setFreshness(server, 'prompts', freshness.prompts);
    }
    if (entry.description && !this.descriptions.has(server)) this.descriptions.set(server, entry.description);
  }

  private contextNow(server: string): Promise<string> {
    return this.hints.contextOf ? this.hints.contextOf(server).catch(() => '\0unknown') : Promise.resolve('');
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

  /** Writes what is known of a running server; with its tools unknown there is nothing whole to write. */
  private save(slot: ServerSlot, client: McpClient): void {
    const tools = this.index.toolsOf(slot.name);
    if (!this.cache || !tools) return;
    // The index keeps only the tools the config lets through; the cache keeps what the server listed.
    const raw = this.rawTools.get(slot.name) ?? tools.map((t) => t.tool);
    const prompts = this.prompts.promptsOf(slot.name)?.map((p) => p.prompt);
    const freshness = this.freshness.get(slot.name);
    const context = this.contexts.get(slot.name);
    this.cache.save(slot.name, this.keyOf(slot), client.serverInfo.version, raw, {
      era: client.era,
      eraCheckedAt: new Date(this.eraChecked.get(slot.name) ?? 0).toISOString(),
      ...(prompts ? { prompts } : {}),
      description: describeClient(client),
      ...(freshness && Object.keys(freshness).length > 0 ? { freshness } : {}),
      ...(context ? { context } : {}),
    });
  }

  private keyOf(slot: ServerSlot): string {
    let key = this.cacheKeys.get(slot.name);
    if (key === undefined) {
      key = 'config' in slot.entry ? ManifestCache.keyOf(slot.entry.config, this.hints.handshake) : '';
      this.cacheKeys.set(slot.name, key);
    }
    return key;
  }
}

/** Whether a slot's server is up or coming up: its listings come from it, not from what is known. */
function isRunning(slot: ServerSlot): boolean {
  return slot.state === 'ready' || slot.state === 'starting';
}
