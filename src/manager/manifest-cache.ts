import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Prompt, Tool } from '../protocol/types.js';
import type { ResolvedRemoteServer, ResolvedServer } from './config.js';
import { isServerDescription, type ServerDescription } from './server-description.js';
import { sanitize, shortHash } from './tool-names.js';

const FORMAT = 'lazy-mcp/tool-manifest@1';

/** One server's tool list as last seen, with what it was seen under. */
export interface ManifestEntry {
  format: typeof FORMAT;
  server: string;
  /** Hash of what starts the server: a config change makes the entry stale. */
  key: string;
  serverVersion: string;
  savedAt: string;
  tools: Tool[];
  /** The server's prompts; absent when they were not listed (an entry written before prompts were kept). */
  prompts?: Prompt[];
  /** What the server said about itself at that start. */
  description?: ServerDescription;
}

/** What is saved beside the tools. */
export interface ManifestExtras {
  prompts?: Prompt[];
  description?: ServerDescription;
}

/** Reports a cache problem; the cache never throws at its callers. */
export type CacheProblem = (server: string, message: string, error?: unknown) => void;

/**
 * Tool lists on disk, one JSON file per server, so a new manager can show every tool
 * without spawning anything. Writes are atomic (temp file + rename); a file that is
 * corrupt or belongs to another config is ignored and later overwritten.
 */
export class ManifestCache {
  /** Per server, the last write or removal: they run in order, so a late removal never wins over a newer save. */
  private readonly queue = new Map<string, Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly onProblem: CacheProblem,
  ) {}

  /** The key of a server's config: what it runs, with what, where. */
  static keyOf(config: ResolvedServer | ResolvedRemoteServer): string {
    if ('url' in config) {
      const headers = Object.entries(config.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return createHash('sha256').update(JSON.stringify([config.transport, config.url, headers])).digest('hex');
    }
    const { command, args, env, cwd, framing, inheritEnv } = config;
    const sortedEnv = Object.entries(env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return createHash('sha256').update(JSON.stringify([command, args ?? [], sortedEnv, cwd ?? null, framing ?? 'newline', inheritEnv ?? false])).digest('hex');
  }

  /** The fresh entry for this server and config, or undefined (missing, stale, corrupt). */
  async load(server: string, key: string): Promise<ManifestEntry | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(server), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.onProblem(server, `cannot read the tool cache of server "${server}"`, error);
      return undefined;
    }
    try {
      const entry = JSON.parse(text) as ManifestEntry;
      const valid =
        entry?.format === FORMAT &&
        entry.server === server &&
        typeof entry.key === 'string' &&
        typeof entry.serverVersion === 'string' &&
        Array.isArray(entry.tools) &&
        entry.tools.every((t) => typeof t?.name === 'string' && typeof t.inputSchema === 'object' && t.inputSchema !== null) &&
        (entry.prompts === undefined || (Array.isArray(entry.prompts) && entry.prompts.every((p) => typeof p?.name === 'string'))) &&
        (entry.description === undefined || isServerDescription(entry.description));
      if (!valid) {
        this.onProblem(server, `ignoring the tool cache of server "${server}": unknown format`);
        return undefined;
      }
      return entry.key === key ? entry : undefined;
    } catch (error) {
      this.onProblem(server, `ignoring the corrupt tool cache of server "${server}"`, error);
      return undefined;
    }
  }

  save(server: string, key: string, serverVersion: string, tools: Tool[], extras: ManifestExtras = {}): Promise<void> {
    return this.inOrder(server, () => this.write(server, key, serverVersion, tools, extras));
  }

  invalidate(server: string): Promise<void> {
    return this.inOrder(server, () =>
      rm(this.fileOf(server), { force: true }).catch((error) => this.onProblem(server, `cannot remove the tool cache of server "${server}"`, error)),
    );
  }

  private inOrder(server: string, work: () => Promise<void>): Promise<void> {
    const next = (this.queue.get(server) ?? Promise.resolve()).then(work);
    this.queue.set(server, next);
    void next.finally(() => this.queue.get(server) === next && this.queue.delete(server));
    return next;
  }

  private async write(server: string, key: string, serverVersion: string, tools: Tool[], extras: ManifestExtras): Promise<void> {
    const entry: ManifestEntry = { format: FORMAT, server, key, serverVersion, savedAt: new Date().toISOString(), tools, ...extras };
    const file = this.fileOf(server);
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true });
      await writeFile(temp, JSON.stringify(entry));
      await rename(temp, file);
    } catch (error) {
      this.onProblem(server, `cannot write the tool cache of server "${server}"`, error);
      await rm(temp, { force: true }).catch(() => undefined);
    }
  }

  private fileOf(server: string): string {
    return join(this.dir, `${sanitize(server).slice(0, 40)}-${shortHash(server)}.json`);
  }
}
