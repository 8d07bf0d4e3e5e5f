import { McpError, serverLabel } from '../../errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../protocol/engine/json-depth.js';
import type { Tool } from '../../protocol/types.js';
import type { ToolPredicate } from './tool-filter.js';
import { NameIndex, nameAgain } from './name-index.js';
import { publicToolNames } from './tool-names.js';

/** A tool as the manager offers it: its public name, its server, and the server's own definition. */
export interface ManagedTool {
  /** `mcp__<server>__<tool>`, safe for chat model APIs. */
  name: string;
  server: string;
  tool: Tool;
}

/** Which public name belongs to which server's tool, for every server whose tools are known. */
export class ToolIndex extends NameIndex<ManagedTool> {
  /** Each server's whole list as it came, so a reload can name its tools again. */
  private readonly raw = new Map<string, readonly Tool[]>();
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
    super(servers);
  }

  /**
   * Replaces a server's tools; a raw name listed twice keeps its first definition; those its
   * config filters out are left out, and so are those nesting deeper than {@link MAX_JSON_DEPTH}
   * (no walk, comparison or serialization of them could be trusted not to overflow the stack).
   * Returns the tools taken, filtered ones included: what is worth saving.
   */
  set(server: string, tools: readonly Tool[]): Tool[] {
    this.clear(server);
    const prefix = this.prefixOf(server);
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
    this.place(server, managed);
    this.byRaw.set(server, new Map(managed.map((entry) => [entry.tool.name, entry])));
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
    const before = this.rename(servers);
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

  override clear(server: string): void {
    super.clear(server);
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
    return this.itemsOf(server);
  }

  /**
   * Known public names closest to `name`, best first, for "did you mean" hints: first the
   * tools whose own (raw) name it is (`read_graph` → `mcp__memory__read_graph`), then close
   * spellings. Bounded work whatever `name` is.
   */
  override closeMatches(name: string, limit = 3, among?: ReadonlySet<string>): string[] {
    const raw = /^mcp__.+?__(.+)$/.exec(name)?.[1] ?? name;
    const exact: string[] = [];
    for (const [server, tools] of this.byRaw) {
      const tool = !among || among.has(server) ? tools.get(raw) : undefined;
      if (tool && tool.name !== name) exact.push(tool.name);
    }
    // In name order, not the order the servers happened to list in: the same hint every time.
    exact.sort();
    if (exact.length >= limit) return exact.slice(0, limit);
    return [...exact, ...super.closeMatches(name, limit - exact.length, among, exact)];
  }
}

function tooDeep(server: string, tool: string): McpError {
  return new McpError(
    'protocol-error',
    `${serverLabel(server)}tool ${JSON.stringify(tool)} was left out: its definition nests deeper than ${MAX_JSON_DEPTH} levels, which lazy-mcp refuses`,
    { server, phase: 'tools/list' },
  );
}

