import type { FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { McpError } from '../../errors.js';
import { parseConfig, type ServerEntry } from './config.js';
import { inFile, workspaceFolderOf } from './config-text.js';
import { fs } from '../../util/lazy-builtins.js';

/** Quiet time after the last change before the file is read, in ms. */
export const DEFAULT_WATCH_DEBOUNCE_MS = 150;

/**
 * Watches one config file and hands its text over once it stops changing. The folder is
 * watched, not the file: editors save by writing a new file and renaming it over the old
 * one, which ends a watch on the file itself. Reads run one at a time, so texts arrive in
 * the order they were read; a text equal to the last one handed over is skipped.
 */
export class ConfigWatcher {
  private readonly watcher: FSWatcher;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly path: string,
    /** The file's text as last handed over (or read at start); only a different text is handed over. */
    private last: string,
    /** Applies a text; a rejection is reported through `onProblem` and the text is retried on the next change. */
    private readonly onText: (text: string) => Promise<unknown>,
    private readonly onProblem: (error: unknown) => void,
    private readonly debounceMs = DEFAULT_WATCH_DEBOUNCE_MS,
  ) {
    const name = basename(path);
    // Not persistent: a watch alone must not keep the host from exiting.
    this.watcher = fs.watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) this.changed();
    });
    this.watcher.on('error', (error) => this.onProblem(error));
    // An edit between the first read and the start of the watch would be missed: look once more.
    this.changed();
  }

  /** Stops watching; a read in flight is not handed over. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.watcher.close();
  }

  private changed(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.chain = this.chain.then(() => this.readAndApply());
    }, this.debounceMs);
    this.timer.unref();
  }

  private async readAndApply(): Promise<void> {
    if (this.closed) return;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      // Gone between a rename's two steps, or deleted: the next change tells.
      if (!this.closed) this.onProblem(error);
      return;
    }
    if (this.closed || text === this.last) return;
    try {
      await this.onText(text);
      this.last = text;
    } catch (error) {
      if (!this.closed) this.onProblem(error);
    }
  }
}

/**
 * Follows a manager's config file: each new text parsed and handed to `apply` (its
 * `${workspaceFolder}` stays the file's workspace on every reload); a problem is reported
 * as an `invalid-config` error named after the file.
 */
export function watchConfigFile(
  path: string,
  text: string,
  apply: (parse: () => ServerEntry[]) => Promise<unknown>,
  report: (error: McpError) => void,
  debounceMs: number | undefined,
): ConfigWatcher {
  return new ConfigWatcher(
    path,
    text,
    (next) => apply(() => parseConfig(next, process.env, { workspaceFolder: workspaceFolderOf(path) })).catch((error: unknown) => Promise.reject(inFile(path, error))),
    (error) =>
      report(error instanceof McpError ? error : new McpError('invalid-config', `cannot read config file ${path}: ${(error as Error).message}`, { phase: 'config', cause: error })),
    debounceMs,
  );
}
