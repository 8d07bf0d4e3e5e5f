import type { Prompt } from '../../protocol/types.js';
import { NameIndex, nameAgain } from './name-index.js';
import { publicToolNames } from './tool-names.js';

/** A prompt as the manager offers it: its public name, its server, and the server's own definition. */
export interface ManagedPrompt {
  /** `mcp__<server>__<prompt>`: the tools' naming rules, in the prompts' own namespace. */
  name: string;
  server: string;
  prompt: Prompt;
}

/** Which public name belongs to which server's prompt: tools' naming rules, in a namespace of their own. */
export class PromptIndex extends NameIndex<ManagedPrompt> {
  /** Replaces a server's prompts; a raw name listed twice keeps its first definition. */
  set(server: string, prompts: readonly Prompt[]): void {
    this.clear(server);
    const first = new Map<string, Prompt>();
    for (const prompt of prompts) if (!first.has(prompt.name)) first.set(prompt.name, prompt);
    const names = publicToolNames(server, this.prefixOf(server), [...first.keys()]);
    this.place(server, [...first.values()].map((prompt) => ({ name: names.get(prompt.name) as string, server, prompt })));
  }

  /**
   * The configured servers changed (a reload): public names are worked out again over the
   * new set, and the prompts of servers no longer configured are forgotten. Returns the
   * servers that stay whose prompts' public names changed.
   */
  reconfigure(servers: readonly string[]): string[] {
    const before = this.rename(servers);
    return nameAgain(this.byServer, before, this.prefixes, (server) => this.clear(server), (server, managed) => this.set(server, managed.map((m) => m.prompt)));
  }

  /** The server's prompts, or undefined when they are not known yet. */
  promptsOf(server: string): ManagedPrompt[] | undefined {
    return this.itemsOf(server);
  }
}
