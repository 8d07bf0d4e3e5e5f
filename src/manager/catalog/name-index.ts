import { claimedServerPart, serverOfPublicName, serverPrefixes } from './tool-names.js';

/** Longest part of a name compared for "did you mean": public names are at most 64 characters. */
const MAX_COMPARED = 80;
/** Most edits a close match may need, whatever the name's length. */
const MAX_DISTANCE = 12;

/** What an index names: one item of one server under its public name. */
export interface Named {
  name: string;
  server: string;
}

/**
 * Which public name belongs to which server's item, for every server whose list is known:
 * the one index behind tools and prompts (each in a namespace of its own, named by the
 * same rules: safe characters, at most 64, a hash on collision).
 */
export class NameIndex<T extends Named> {
  private configured: readonly string[];
  // Worked out at the first name asked for, not at construction: a fresh process
  // constructing hundreds of servers pays for every allocation in scavenges (issue 34).
  private named: Map<string, string> | undefined;
  protected readonly byServer = new Map<string, T[]>();
  protected readonly byName = new Map<string, T>();

  constructor(servers: readonly string[]) {
    this.configured = servers;
  }

  /** Each configured server's part of its items' public names. */
  protected get prefixes(): Map<string, string> {
    return (this.named ??= serverPrefixes(this.configured));
  }

  /** The server part of every public name of `server`'s items. */
  protected prefixOf(server: string): string {
    return this.prefixes.get(server) as string;
  }

  /** Makes `items` the server's whole list under their public names. */
  protected place(server: string, items: T[]): void {
    this.byServer.set(server, items);
    for (const item of items) this.byName.set(item.name, item);
  }

  /** Takes the new set of configured servers (a reload); returns the prefixes before. */
  protected rename(servers: readonly string[]): Map<string, string> {
    const before = this.prefixes;
    this.configured = servers;
    this.named = undefined;
    return before;
  }

  clear(server: string): void {
    for (const item of this.byServer.get(server) ?? []) this.byName.delete(item.name);
    this.byServer.delete(server);
  }

  /** The server's items, or undefined when they are not known yet. */
  itemsOf(server: string): T[] | undefined {
    return this.byServer.get(server);
  }

  resolve(publicName: string): T | undefined {
    return this.byName.get(publicName);
  }

  /** The server a public name points at, from the configured names alone (nothing needs to be started). */
  serverOf(publicName: string): string | undefined {
    return this.byName.get(publicName)?.server ?? serverOfPublicName(publicName, this.prefixes);
  }

  /** The server part of a name in the public shape whose server is not configured, for `unknown-server`. */
  unknownServerPart(publicName: string): string | undefined {
    return this.serverOf(publicName) === undefined ? claimedServerPart(publicName) : undefined;
  }

  /** The configured servers, in configuration order. */
  servers(): string[] {
    return [...this.prefixes.keys()];
  }

  /** Configured servers whose public server part is close to `part`, best first. */
  closeServers(part: string, limit = 3): string[] {
    return closest(part, [...this.prefixes].map(([server, prefix]) => [prefix, server]), limit);
  }

  /** Known public names closest to `name` (of the servers `among`, default all), best first, leaving out `except`. */
  closeMatches(name: string, limit = 3, among?: ReadonlySet<string>, except: readonly string[] = []): string[] {
    const candidates: [string, string][] = [];
    for (const [candidate, item] of this.byName) if ((!among || among.has(item.server)) && !except.includes(candidate)) candidates.push([candidate, candidate]);
    return closest(name, candidates, limit);
  }
}

/**
 * A reload's pass over an index's known listings: a server no longer configured (absent
 * from `after`) is forgotten, one whose server part changed is named again from its
 * listing. Returns the servers named again. `after` must already be the index's prefixes.
 */
export function nameAgain<T>(
  listings: ReadonlyMap<string, T>,
  before: ReadonlyMap<string, string>,
  after: ReadonlyMap<string, string>,
  forget: (server: string) => void,
  name: (server: string, listing: T) => void,
): string[] {
  const renamed: string[] = [];
  for (const [server, listing] of [...listings]) {
    if (!after.has(server)) forget(server);
    else if (before.get(server) !== after.get(server)) {
      name(server, listing);
      renamed.push(server);
    }
  }
  return renamed;
}

/** The `limit` values whose keys are within a bounded edit distance of `query`, best first. */
export function closest(query: string, candidates: readonly [key: string, value: string][], limit: number): string[] {
  const q = query.slice(0, MAX_COMPARED);
  const bound = Math.min(MAX_DISTANCE, Math.max(3, Math.floor(q.length / 3)));
  const rows: [Int32Array, Int32Array] = [new Int32Array(MAX_COMPARED + 2), new Int32Array(MAX_COMPARED + 2)];
  const scored: [number, string][] = [];
  for (const [key, value] of candidates) {
    if (Math.abs(Math.min(key.length, MAX_COMPARED) - q.length) > bound) continue;
    const distance = boundedDistance(q, key.slice(0, MAX_COMPARED), bound, rows);
    if (distance <= bound) scored.push([distance, value]);
  }
  return scored
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .slice(0, limit)
    .map(([, value]) => value);
}

/**
 * Levenshtein distance of `a` and `b` if it is at most `bound`, else `bound + 1`: only the
 * band of width 2·bound+1 around the diagonal is filled, and a row past the bound ends it.
 * `rows` are two scratch rows longer than `b`, reused across candidates.
 */
function boundedDistance(a: string, b: string, bound: number, rows: [Int32Array, Int32Array]): number {
  const over = bound + 1;
  let [previous, row] = rows;
  for (let j = 0; j <= b.length; j++) previous[j] = j <= bound ? j : over;
  previous[b.length + 1] = over;
  for (let i = 1; i <= a.length; i++) {
    const from = i - bound > 1 ? i - bound : 1;
    const to = i + bound < b.length ? i + bound : b.length;
    row[from - 1] = from === 1 ? (i <= bound ? i : over) : over;
    let best = row[from - 1];
    for (let j = from; j <= to; j++) {
      // Plain comparisons, no Math.min: a global lookup per cell is slow in some hosts (vm contexts).
      let value = previous[j - 1] + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      const up = previous[j] + 1;
      const left = row[j - 1] + 1;
      if (up < value) value = up;
      if (left < value) value = left;
      if (value > over) value = over;
      row[j] = value;
      if (value < best) best = value;
    }
    row[to + 1] = over;
    if (best > bound) return over;
    [previous, row] = [row, previous];
  }
  return previous[b.length];
}
