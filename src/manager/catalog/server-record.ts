import type { McpClient } from '../../protocol/client.js';
import type { ProtocolEra, Tool } from '../../protocol/types.js';
import type { Freshness, Listing, ListingFreshness } from './freshness.js';
import type { ManifestEntry } from './manifest-cache.js';
import type { ServerDescription } from './server-description.js';

/** How long an era found by probing is trusted before the next start probes again (a week). */
export const ERA_VERDICT_MAX_AGE_MS = 7 * 24 * 3600_000;

/** Connections whose era was dated already: a later re-list of the same connection probed nothing. */
const dated = new WeakSet<McpClient>();

/**
 * What the catalog knows of one server beyond its names: one record per configured
 * server, dropped whole when a reload removes or changes it.
 */
export class ServerRecord {
  /** Its manifest cache key (config and handshake), made once. */
  cacheKey: string | undefined;
  /** Its tools as it listed them, before the config's filter: what the cache keeps. */
  rawTools: Tool[] | undefined;
  /** What it said about itself at its last start (or in its cache entry). */
  description: ServerDescription | undefined;
  /** The lifetimes it gave what is indexed of it. */
  freshness: ListingFreshness = {};
  /** The authorization context of its last live listing. */
  context: string | undefined;
  /** Its indexed tools came from a cache entry no live listing of this manager has confirmed. */
  unconfirmed = false;
  /** The era it was last seen to speak (live, or from its cache entry): the next start's hint. */
  private era: ProtocolEra | undefined;
  /** When its era was last found by probing (ms since the epoch); 0: to probe again. */
  eraChecked = 0;
  /** The server version the era verdict was made with: another version is probed again. */
  private version: string | undefined;
  /** Its era hint failed a start: its cache entry's era is not used until a start lists it again. */
  private distrusted = false;

  /** Sets (or, with none, drops) the lifetime of one of its listings. */
  setFreshness(listing: Listing, freshness: Freshness | undefined): void {
    if (freshness) this.freshness[listing] = freshness;
    else delete this.freshness[listing];
  }

  /** The era it spoke when last seen, for `ConnectOptions.era`; undefined: probe. */
  eraHint(): ProtocolEra | undefined {
    return Date.now() - this.eraChecked < ERA_VERDICT_MAX_AGE_MS ? this.era : undefined;
  }

  /** Whether a start may trust what is known of it: the same era and version, and no failed hint since. */
  sameServer(client: McpClient): boolean {
    return this.era === client.era && this.version === client.serverInfo.version && !this.distrusted;
  }

  /**
   * Dates a started server's era: found by probing now, or kept from the verdict its start
   * trusted, unless its version changed since (then the next start probes).
   */
  dateEra(client: McpClient): void {
    this.distrusted = false;
    if (dated.has(client)) return;
    dated.add(client);
    const hinted = this.eraHint() === client.era;
    const sameVersion = this.version === client.serverInfo.version;
    if (!hinted) this.eraChecked = Date.now();
    else if (!sameVersion) this.eraChecked = 0;
    if (!hinted || sameVersion) this.version = client.serverInfo.version;
    this.era = client.era;
  }

  /** The era hint is not to be trusted any more (a start failed): the next start probes. */
  forgetEra(): void {
    this.era = undefined;
    this.distrusted = true;
  }

  /** A cache entry's era verdict, unless one is known already or the hint was distrusted. */
  adoptEra(entry: ManifestEntry): void {
    if (!entry.era || this.era !== undefined || this.distrusted) return;
    this.era = entry.era;
    this.eraChecked = Date.parse(entry.eraCheckedAt ?? entry.savedAt) || 0;
    this.version = entry.serverVersion;
  }
}
