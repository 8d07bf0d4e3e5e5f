import { McpError, serverLabel } from '../../errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../protocol/engine/json-depth.js';
import type { Tool } from '../../protocol/types.js';
import type { ToolPredicate } from './tool-filter.js';
import { claimedServerPart, publicToolNames, serverOfPublicName, serverPrefixes } from './tool-names.js';

/** A tool as the manager offers it: its public name, its server, and the server's own definition. */
export interface ManagedTool {
  /** `mcp__<server>__<tool>`, safe for chat model APIs. */
  name: string;
  server: string;
  tool: Tool;
}

/** Longest part of a name compared for "did you mean": public names are at most 64 characters. */
const MAX_COMPARED = 80;
/** Most edits a close match may need, whatever the name's length. */
const MAX_DISTANCE = 12;

/** Which public name belongs to which server's tool, for every server whose tools are known. */
export class ToolIndex {
  private prefixes: Map<string, string>;
  /** Each server's whole list as it came, so a reload can name its tools again. */
  private readonly raw = new Map<string, readonly Tool[]>();
  private readonly byServer = new Map<string, ManagedTool[]>();
  private readonly byName = new Map<string, ManagedTool>();
  /** Public names of tools left out for nesting too deep, with the error a call to one gets. */
  private readonly refused = new Map<string, { server: string; error: McpError }>();
  /** Problems already reported (a tool listed twice, one refused), so a re-listing does not repeat them. */
  private readonly byRaw = new Map<string, Map<string, ManagedTool>>();
  private readonly reported = new Set<string>();

  /** `filters`: per server, which raw tool names the config lets through (none: all). */
  constructor(
    servers: readonly string[],
    private filters: ReadonlyMap<string, ToolPredicate | undefined> = new Map(),
    /** Told once per server and tool of a problem with its listing: a tool listed twice (the first is kept), one refused. */
    private readonly onProblem: (server: string, message: string) => void = () => undefined,
  ) {
    this.prefixes = serverPrefixes(servers);
  }

  /**
   * Replaces a server's tools; a raw name listed twice keeps its first definition; those its
   * config filters out are left out, and so are those nesting deeper than {@link MAX_JSON_DEPTH}
   * (no walk, comparison or serialization of them could be trusted not to overflow the stack).
   * Returns the tools taken, filtered ones included: what is worth saving.
   */
  set(server: string, tools: readonly Tool[]): Tool[] {
    this.clear(server);
    const prefix = this.prefixes.get(server) as string;
    const first = new Map<string, Tool>();
    for (const tool of tools) {
      if (!first.has(tool.name)) first.set(tool.name, tool);
      else this.report(server, `twice\0${tool.name}`, `the server listed tool ${JSON.stringify(tool.name)} more than once; the first definition is used`);
    }
    // Names come from the whole list, so changing a filter never renames the tools it keeps.
    const names = publicToolNames(server, prefix, [...first.keys()]);
    const taken: Tool[] = [];
    for (const tool of first.values()) {
      if (!nestsDeeperThan(tool, MAX_JSON_DEPTH)) taken.push(tool);
      else if (this.allowed(server, tool.name)) {
        const error = tooDeep(server, tool.name);
        this.refused.set(names.get(tool.name) as string, { server, error });
        this.report(server, `deep\0${tool.name}`, error.message);
      }
    }
    const managed = this.visible(server, taken).map((tool) => ({ name: names.get(tool.name) as string, server, tool }));
    this.byServer.set(server, managed);
    this.byRaw.set(server, new Map(managed.map((entry) => [entry.tool.name, entry])));
    for (const entry of managed) this.byName.set(entry.name, entry);
    this.raw.set(server, tools);
    return taken;
  }

  /** Why a public name that belongs to a tool left out of its server's listing cannot be called. */
  refusal(publicName: string): { server: string; error: McpError } | undefined {
    return this.refused.get(publicName);
  }

  /**
   * The configured servers changed (a reload): the public names are worked out again over
   * the new set of servers, and the tools of servers no longer configured are forgotten.
   * Returns the servers that stay whose tools' public names changed (a new server's name
   * collides with theirs).
   */
  reconfigure(servers: readonly string[], filters: ReadonlyMap<string, ToolPredicate | undefined>): string[] {
    const before = this.prefixes;
    this.prefixes = serverPrefixes(servers);
    this.filters = filters;
    return nameAgain(this.raw, before, this.prefixes, (server) => this.clear(server), (server, raw) => this.set(server, raw));
  }

  /** Whether the server's config lets this raw tool name through. */
  allowed(server: string, rawName: string): boolean {
    return this.filters.get(server)?.(rawName) ?? true;
  }

  /** The tools of a list that the server's config lets through. */
  visible(server: string, tools: readonly Tool[]): readonly Tool[] {
    const allowed = this.filters.get(server);
    return allowed ? tools.filter((t) => allowed(t.name)) : tools;
  }

  clear(server: string): void {
    for (const entry of this.byServer.get(server) ?? []) this.byName.delete(entry.name);
    this.byServer.delete(server);
    for (const [name, refused] of this.refused) if (refused.server === server) this.refused.delete(name);
    this.raw.delete(server);
    this.byRaw.delete(server);
  }

  private report(server: string, key: string, message: string): void {
    if (this.reported.has(`${server}\0${key}`)) return;
    this.reported.add(`${server}\0${key}`);
    this.onProblem(server, message);
  }

  /** The server's own definition of a raw tool name, when known and let through. */
  definition(server: string, rawName: string): ManagedTool | undefined {
    return this.byRaw.get(server)?.get(rawName);
  }

  /** The server's tools, or undefined when they are not known yet. */
  toolsOf(server: string): ManagedTool[] | undefined {
    return this.byServer.get(server);
  }

  resolve(publicName: string): ManagedTool | undefined {
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

  /** Configured servers whose public server part is close to `part`, best first. */
  closeServers(part: string, limit = 3): string[] {
    return closest(part, [...this.prefixes].map(([server, prefix]) => [prefix, server]), limit);
  }

  /**
   * Known public names closest to `name`, best first, for "did you mean" hints: first the
   * tools whose own (raw) name it is (`read_graph` → `mcp__memory__read_graph`), then close
   * spellings. Bounded work whatever `name` is.
   */
  closeMatches(name: string, limit = 3, among?: ReadonlySet<string>): string[] {
    const raw = /^mcp__.+?__(.+)$/.exec(name)?.[1] ?? name;
    const exact: string[] = [];
    for (const [server, tools] of this.byRaw) {
      const tool = !among || among.has(server) ? tools.get(raw) : undefined;
      if (tool && tool.name !== name) exact.push(tool.name);
    }
    // In name order, not the order the servers happened to list in: the same hint every time.
    exact.sort();
    if (exact.length >= limit) return exact.slice(0, limit);
    const candidates: [string, string][] = [];
    for (const [candidate, entry] of this.byName) if ((!among || among.has(entry.server)) && !exact.includes(candidate)) candidates.push([candidate, candidate]);
    return [...exact, ...closest(name, candidates, limit - exact.length)];
  }
}

function tooDeep(server: string, tool: string): McpError {
  return new McpError(
    'protocol-error',
    `${serverLabel(server)}tool ${JSON.stringify(tool)} was left out: its definition nests deeper than ${MAX_JSON_DEPTH} levels, which lazy-mcp refuses`,
    { server, phase: 'tools/list' },
  );
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
