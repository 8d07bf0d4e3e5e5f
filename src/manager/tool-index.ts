import type { Tool } from '../protocol/types.js';
import type { ToolPredicate } from './tool-filter.js';
import { publicToolNames, serverOfPublicName, serverPrefixes } from './tool-names.js';

/** A tool as the manager offers it: its public name, its server, and the server's own definition. */
export interface ManagedTool {
  /** `mcp__<server>__<tool>`, safe for chat model APIs. */
  name: string;
  server: string;
  tool: Tool;
}

/** Which public name belongs to which server's tool, for every server whose tools are known. */
export class ToolIndex {
  private readonly prefixes: Map<string, string>;
  private readonly byServer = new Map<string, ManagedTool[]>();
  private readonly byName = new Map<string, ManagedTool>();

  /** `filters`: per server, which raw tool names the config lets through (none: all). */
  constructor(
    servers: readonly string[],
    private readonly filters: ReadonlyMap<string, ToolPredicate | undefined> = new Map(),
  ) {
    this.prefixes = serverPrefixes(servers);
  }

  /** Replaces a server's tools; those its config filters out are left out. */
  set(server: string, tools: readonly Tool[]): void {
    this.clear(server);
    const prefix = this.prefixes.get(server) as string;
    const others = [...this.prefixes].filter(([s]) => s !== server).map(([, p]) => p);
    // Names come from the whole list, so changing a filter never renames the tools it keeps.
    const names = publicToolNames(server, prefix, tools.map((t) => t.name), others);
    const managed = this.visible(server, tools).map((tool) => ({ name: names.get(tool.name) as string, server, tool }));
    this.byServer.set(server, managed);
    for (const entry of managed) this.byName.set(entry.name, entry);
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
  }

  /** The server's tools, or undefined when they are not known yet. */
  toolsOf(server: string): ManagedTool[] | undefined {
    return this.byServer.get(server);
  }

  resolve(publicName: string): ManagedTool | undefined {
    return this.byName.get(publicName);
  }

  /** The server a public name points at, from its prefix alone (nothing needs to be started). */
  serverOf(publicName: string): string | undefined {
    return this.byName.get(publicName)?.server ?? serverOfPublicName(publicName, this.prefixes);
  }

  /** Known public names closest to `name`, best first, for "did you mean" hints. */
  closeMatches(name: string, limit = 3, among?: ReadonlySet<string>): string[] {
    const scored: [number, string][] = [];
    for (const candidate of this.byName.keys()) {
      if (among && !among.has(this.byName.get(candidate)!.server)) continue;
      const distance = editDistance(name, candidate);
      if (distance <= Math.max(3, Math.floor(name.length / 3))) scored.push([distance, candidate]);
    }
    return scored
      .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1))
      .slice(0, limit)
      .map(([, candidate]) => candidate);
  }
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}
