import type { Stats } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDir } from '../../util/make-dir.js';
import type { Prompt, ProtocolEra, Tool } from '../../protocol/types.js';
import type { ResolvedRemoteServer, ResolvedServer } from '../config/config.js';
import { isListingFreshness, type ListingFreshness } from './freshness.js';
import { isServerDescription, type ServerDescription } from './server-description.js';
import { sanitize, shortHash } from './tool-names.js';
import { fs, randomHex, sha256 } from '../../util/lazy-builtins.js';

const FORMAT = 'lazy-mcp/tool-manifest@1';

/** Largest cache file read, in bytes: a bigger one is ignored unread, whatever planted it. */
export const MAX_CACHE_FILE_BYTES = 8 * 1024 * 1024;

/** One server's tool list as last seen, with what it was seen under. */
export interface ManifestEntry {
  format: typeof FORMAT;
  server: string;
  /** Hash of what starts the server: a config change makes the entry stale. */
  key: string;
  serverVersion: string;
  savedAt: string;
  tools: Tool[];
  /** The protocol era the server was found to speak, so the next start need not probe. Absent in older entries. */
  era?: ProtocolEra;
  /** When that era was found by probing (ISO date; `savedAt` in older entries): an old verdict is probed again. */
  eraCheckedAt?: string;
  /** The server's prompts; absent when they were not listed (an entry written before prompts were kept). */
  prompts?: Prompt[];
  /** What the server said about itself at that start. */
  description?: ServerDescription;
  /** The lifetimes the server gave its listings (2026 era); absent: no hints, kept until invalidated. */
  freshness?: ListingFreshness;
  /** The authorization context the listings were made in (a hash, never a token): a private listing serves only that one. */
  context?: string;
}

/** What is saved beside the tools. */
export type ManifestExtras = Pick<ManifestEntry, 'era' | 'eraCheckedAt' | 'prompts' | 'description' | 'freshness' | 'context'>;

/** Reports a cache problem; the cache never throws at its callers. It never quotes a file's contents. */
export type CacheProblem = (server: string, message: string, error?: unknown) => void;

/** What a server's file is to hold once the queue is written: an entry, or nothing (removed). */
type Pending = ManifestEntry | null;

/**
 * Tool lists on disk, one JSON file per server, so a new manager can show every tool
 * without spawning anything. Writes are atomic (temp file + rename) and fire-and-forget:
 * one writer works through a queue holding at most the latest change per server, so a
 * write that never completes costs no call, no start and no memory beyond one entry per
 * server. A file that is not a regular file, is over {@link MAX_CACHE_FILE_BYTES}, is
 * corrupt or belongs to another config is ignored (never quoted) and later overwritten.
 */
export class ManifestCache {
  /** Changes not yet started, the latest per server, oldest server first. */
  private readonly pending = new Map<string, Pending>();
  /** The change being written now. */
  private writing: { server: string; value: Pending } | undefined;
  /** Settles when the writer has done the change in hand and moved on; never rejects. */
  private draining: Promise<void> | undefined;
  private dirMade = false;
  /** Each server's file as this cache last read or wrote it, to leave a file alone that would not change. */
  private readonly onDisk = new Map<string, { text: string; savedAt: string }>();

  constructor(
    private readonly dir: string,
    private readonly onProblem: CacheProblem,
  ) {}

  /**
   * The key of what a server's answer depends on: what it runs, with what, where, and what
   * the client tells it in the handshake (`handshake`, see {@link handshakeKey}): a server
   * may list other tools to a client that declares sampling or elicitation.
   */
  static keyOf(config: ResolvedServer | ResolvedRemoteServer, handshake = ''): string {
    if ('url' in config) {
      const headers = Object.entries(config.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return sha256(JSON.stringify([config.transport, config.url, headers, handshake]), 'hex');
    }
    const { command, args, env, cwd, framing, inheritEnv } = config;
    const sortedEnv = Object.entries(env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return sha256(JSON.stringify([command, args ?? [], sortedEnv, cwd ?? null, framing ?? 'newline', inheritEnv ?? false, handshake]), 'hex');
  }

  /** What the client says of itself at `initialize`: its `clientInfo` and the capabilities it declares (roots among them). */
  static handshakeKey(clientInfo: { name: string; version: string }, declared: readonly string[]): string {
    return JSON.stringify([clientInfo.name, clientInfo.version, [...declared].sort()]);
  }

  /** The fresh entry for this server and config, or undefined (missing, stale, refused, corrupt). */
  async load(server: string, key: string): Promise<ManifestEntry | undefined> {
    // A change still queued here is newer than the file.
    const queued = this.pending.has(server) ? this.pending.get(server) : this.writing?.server === server ? this.writing.value : undefined;
    if (queued !== undefined) return queued?.key === key ? queued : undefined;
    const text = this.read(server);
    if (text === undefined) return undefined;
    let entry: ManifestEntry;
    try {
      entry = JSON.parse(text) as ManifestEntry;
    } catch {
      // Not the parser's message: it quotes the text, and the file may be anything a symlink or a planter chose.
      this.onProblem(server, `ignoring the corrupt tool cache of server "${server}" (${this.fileOf(server)}): not valid JSON`);
      return undefined;
    }
    const valid = isManifestEntry(entry, server);
    if (!valid) {
      this.onProblem(server, `ignoring the tool cache of server "${server}" (${this.fileOf(server)}): unknown format`);
      return undefined;
    }
    this.onDisk.set(server, { text, savedAt: entry.savedAt });
    return entry.key === key ? entry : undefined;
  }

  /**
   * Queues the server's tools to be written; returns at once (a write never delays a call).
   * What the file holds already (but for the date) is not written again.
   */
  save(server: string, key: string, serverVersion: string, tools: Tool[], extras: ManifestExtras = {}): void {
    const entry: ManifestEntry = { format: FORMAT, server, key, serverVersion, savedAt: '', tools, ...extras };
    const disk = this.onDisk.get(server);
    if (disk && !this.pending.has(server) && this.writing?.server !== server) {
      entry.savedAt = disk.savedAt;
      if (JSON.stringify(entry) === disk.text) return;
    }
    entry.savedAt = new Date().toISOString();
    this.enqueue(server, entry);
  }

  /** Queues the removal of the server's entry; returns at once. */
  invalidate(server: string): void {
    this.enqueue(server, null);
  }

  /** Resolves once every queued change is on disk, or after `ms`, whichever is first. Never rejects. */
  flushed(ms: number): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, ms);
      const check = (): void => {
        if (this.draining) void this.draining.then(check);
        else {
          clearTimeout(timer);
          done();
        }
      };
      check();
    });
  }

  private enqueue(server: string, value: Pending): void {
    // Until the writer has done this change, the file is not known.
    this.onDisk.delete(server);
    // Only the latest change matters: an older one still queued is replaced, and the server goes to the back.
    this.pending.delete(server);
    this.pending.set(server, value);
    this.kick();
  }

  private kick(): void {
    if (this.draining || this.pending.size === 0) return;
    const [server, value] = this.pending.entries().next().value as [string, Pending];
    this.pending.delete(server);
    this.writing = { server, value };
    this.draining = (value ? this.write(server, value) : this.remove(server))
      .catch((error: unknown) => this.onProblem(server, `cannot update the tool cache of server "${server}"`, error))
      .finally(() => {
        this.writing = undefined;
        this.draining = undefined;
        this.kick();
      });
  }

  /**
   * The file's text, read only if it is a regular file (not a symlink, FIFO or device)
   * within the size cap. Read synchronously: five thread-pool trips cost a cold call ~0.5 ms of
   * host time (and its server the CPU it shares), a small file's synchronous read ~50 µs,
   * and the JSON.parse that follows blocks longer than the read of even the largest file.
   */
  private read(server: string): string | undefined {
    const file = this.fileOf(server);
    const refuse = (why: string) => this.onProblem(server, `ignoring the tool cache of server "${server}" (${file}): ${why}`);
    const tooBig = (size: number) => refuse(`it has ${size} bytes, more than the ${MAX_CACHE_FILE_BYTES} a cache file may have`);
    try {
      const seen = fs.lstatSync(file, { throwIfNoEntry: false });
      if (seen === undefined) return undefined;
      if (!seen.isFile()) return void refuse('not a regular file');
      // Tools read from a file someone else could have written would reach the model unchecked.
      const folder = untrusted(fs.statSync(this.dir));
      if (folder) return void refuse(`its folder ${this.dir} ${folder}`);
      if (seen.size > MAX_CACHE_FILE_BYTES) return void tooBig(seen.size);
      // No following a symlink, no waiting on a FIFO swapped in since the lstat.
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      try {
        const info = fs.fstatSync(fd);
        if (!info.isFile()) return void refuse('not a regular file');
        const owner = untrusted(info);
        if (owner) return void refuse(`it ${owner}`);
        // One byte more than expected tells a file that grew since; never more than the cap plus one.
        const buffer = Buffer.alloc(Math.min(info.size, MAX_CACHE_FILE_BYTES) + 1);
        let length = 0;
        while (length < buffer.length) {
          const wanted = buffer.length - length;
          const bytesRead = fs.readSync(fd, buffer, length, wanted, length);
          length += bytesRead;
          // A regular file reads short only at its end: no second read to learn that.
          if (bytesRead < wanted) break;
        }
        if (length > MAX_CACHE_FILE_BYTES) return void tooBig(length);
        return buffer.toString('utf8', 0, length);
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') return void refuse('not a regular file');
      // An fs error names the path and the reason, never the contents.
      this.onProblem(server, `cannot read the tool cache of server "${server}"`, error);
      return undefined;
    }
  }

  private async write(server: string, entry: ManifestEntry): Promise<void> {
    const file = this.fileOf(server);
    const temp = `${file}.${process.pid}.${randomHex(4)}.tmp`;
    try {
      await this.makeDir();
      const text = JSON.stringify(entry);
      await writeFile(temp, text, { mode: 0o600, flag: 'wx' });
      await rename(temp, file);
      this.onDisk.set(server, { text, savedAt: entry.savedAt });
    } catch (error) {
      this.dirMade = false;
      this.onProblem(server, `cannot write the tool cache of server "${server}"`, error);
      await rm(temp, { force: true }).catch(() => undefined);
    }
  }

  private async remove(server: string): Promise<void> {
    await rm(this.fileOf(server), { force: true }).catch((error) => this.onProblem(server, `cannot remove the tool cache of server "${server}"`, error));
  }

  /** Creates the cache folder (0700) once; a failed write makes the next one try again. */
  private async makeDir(): Promise<void> {
    if (this.dirMade) return;
    await makeDir(this.dir, 0o700);
    // Entries written where others can replace them would be refused when read: not written at all.
    const folder = untrusted(fs.statSync(this.dir));
    if (folder) throw new Error(`the cache folder ${this.dir} ${folder}; give a folder of your own (chmod go-w)`);
    this.dirMade = true;
  }

  private fileOf(server: string): string {
    return join(this.dir, `${sanitize(server).slice(0, 40)}-${shortHash(server)}.json`);
  }
}

/**
 * Why a cache file or folder cannot be trusted (another user owns it, or others may write
 * it), or undefined. Where there are no uids (Windows) the folder's ACL is the user's own.
 */
export function untrusted(info: Pick<Stats, 'uid' | 'mode'>, uid: number | undefined = process.getuid?.()): string | undefined {
  if (uid === undefined) return undefined;
  if (info.uid !== uid) return `is owned by another user (uid ${info.uid})`;
  if ((info.mode & 0o022) !== 0) return `can be written by other users (mode ${(info.mode & 0o777).toString(8)})`;
  return undefined;
}

/** Whether a parsed value is a well-formed entry of `server` (files and shared stores are read alike). */
export function isManifestEntry(entry: ManifestEntry, server: string): boolean {
  return (
    entry?.format === FORMAT &&
    entry.server === server &&
    typeof entry.key === 'string' &&
    typeof entry.serverVersion === 'string' &&
    Array.isArray(entry.tools) &&
    (entry.era === undefined || entry.era === '2026' || entry.era === 'legacy') &&
    (entry.eraCheckedAt === undefined || typeof entry.eraCheckedAt === 'string') &&
    entry.tools.every(
      (t) =>
        typeof t?.name === 'string' &&
        typeof t.inputSchema === 'object' &&
        t.inputSchema !== null &&
        (t.description === undefined || typeof t.description === 'string') &&
        (t.title === undefined || typeof t.title === 'string'),
    ) &&
    (entry.prompts === undefined || (Array.isArray(entry.prompts) && entry.prompts.every((p) => typeof p?.name === 'string'))) &&
    (entry.description === undefined || isServerDescription(entry.description)) &&
    (entry.freshness === undefined || isListingFreshness(entry.freshness)) &&
    (entry.context === undefined || typeof entry.context === 'string')
  );
}

/** An entry as {@link ManifestCache.save} writes it, for stores other than the folder. */
export function manifestEntry(server: string, key: string, serverVersion: string, tools: Tool[], extras: ManifestExtras = {}): ManifestEntry {
  return { format: FORMAT, server, key, serverVersion, savedAt: new Date().toISOString(), tools, ...extras };
}
