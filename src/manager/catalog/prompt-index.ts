import type { Prompt } from '../../protocol/types.js';
import { closest, nameAgain } from './tool-index.js';
import { claimedServerPart, publicToolNames, serverOfPublicName, serverPrefixes } from './tool-names.js';

/** A prompt as the manager offers it: its public name, its server, and the server's own definition. */
export interface ManagedPrompt {
  /** `mcp__<server>__<prompt>`: the tools' naming rules, in the prompts' own namespace. */
  name: string;
  server: string;
  prompt: Prompt;
}

/**
 * Which public name belongs to which server's prompt. Prompts are named like tools
 * (safe characters, at most 64, a hash on collision) but in a namespace of their own: a
 * prompt and a tool may share a public name without either one being renamed.
 */
export class PromptIndex {
  private prefixes: Map<string, string>;
  private readonly byServer = new Map<string, ManagedPrompt[]>();
  private readonly byName = new Map<string, ManagedPrompt>();

  constructor(servers: readonly string[]) {
    this.prefixes = serverPrefixes(servers);
  }

  /** Replaces a server's prompts; a raw name listed twice keeps its first definition. */
  set(server: string, prompts: readonly Prompt[]): void {
    this.clear(server);
    const first = new Map<string, Prompt>();
    for (const prompt of prompts) if (!first.has(prompt.name)) first.set(prompt.name, prompt);
    const names = publicToolNames(server, this.prefixes.get(server) as string, [...first.keys()]);
    const managed = [...first.values()].map((prompt) => ({ name: names.get(prompt.name) as string, server, prompt }));
    this.byServer.set(server, managed);
    for (const entry of managed) this.byName.set(entry.name, entry);
  }

  /**
   * The configured servers changed (a reload): public names are worked out again over the
   * new set, and the prompts of servers no longer configured are forgotten. Returns the
   * servers that stay whose prompts' public names changed.
   */
  reconfigure(servers: readonly string[]): string[] {
    const before = this.prefixes;
    this.prefixes = serverPrefixes(servers);
    return nameAgain(this.byServer, before, this.prefixes, (server) => this.clear(server), (server, managed) => this.set(server, managed.map((m) => m.prompt)));
  }

  clear(server: string): void {
    for (const entry of this.byServer.get(server) ?? []) this.byName.delete(entry.name);
    this.byServer.delete(server);
  }

  /** The server's prompts, or undefined when they are not known yet. */
  promptsOf(server: string): ManagedPrompt[] | undefined {
    return this.byServer.get(server);
  }

  resolve(publicName: string): ManagedPrompt | undefined {
    return this.byName.get(publicName);
  }

  /** The server a public prompt name points at, from the configured names alone. */
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

  /** Known public prompt names closest to `name`, best first. */
  closeMatches(name: string, limit = 3, among?: ReadonlySet<string>): string[] {
    const candidates: [string, string][] = [];
    for (const [candidate, entry] of this.byName) if (!among || among.has(entry.server)) candidates.push([candidate, candidate]);
    return closest(name, candidates, limit);
  }
}
