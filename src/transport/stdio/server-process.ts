import { EventEmitter } from 'node:events';
import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_SHUTDOWN_GRACE_MS, type ExitStatus } from '../channel.js';
import { withinTime } from '../../util/deadline.js';
import { sandboxEnvironment } from './child-env.js';
import { registerGroup, unregisterGroup } from './exit-hook.js';
import { GroupProbe, signalGroup } from './process-group.js';
import { SandboxSetupError, sandboxLaunch } from './sandbox/launch.js';
import type { SandboxStatus } from './sandbox/policy.js';
import { directLaunch, loadSpawner, resolveSpec, spawned, spawnFailed, startChild, type Child, type Launch, type ProcessSpec, type ResolvedSpec } from './spawn-child.js';
import { LineSplitter, StderrTail } from './stderr-tail.js';

export type { ProcessSpec } from './spawn-child.js';

/** How a process ended: exactly one of the two is set. */
export type { ExitStatus } from '../channel.js';

/** Events of a {@link ServerProcess}. */
export interface ServerProcessEvents {
  /** One stderr line, without its line ending; blank lines are skipped. */
  stderr: [line: string];
  /** The process has exited; emitted once, when `exited` settles. */
  exit: [status: ExitStatus];
}

/** `close()`'s default grace, in ms. */
export const DEFAULT_CLOSE_GRACE_MS = DEFAULT_SHUTDOWN_GRACE_MS;
/** How much longer than its grace `close()` may take at most, in ms. */
export const CLOSE_HARD_BOUND_MS = 1000;
const POLL_MS = 25;
/** How long to wait after the exit for its last stderr lines, which usually explain it. */
const STDERR_FLUSH_MS = 100;
const ORPHAN_WATCH_MS = 500;

/**
 * One running server process. It owns the process's whole lifetime: nothing but
 * `close()`, the process's own exit or the host's exit ends it — no timeout or
 * AbortSignal of whoever started it.
 */
export class ServerProcess extends EventEmitter<ServerProcessEvents> {
  /** The leader's pid; also the id of its process group. */
  readonly pid: number;
  readonly stdin: Writable;
  /** The server's stdout, raw Buffers; read it (attaching a reader late loses nothing). */
  readonly stdout: Readable;
  /**
   * Bytes read from the server's stdout and written to its stdin so far, framing included:
   * live getters over the pipes' own counters, so reading them costs nothing on the message path.
   */
  readonly traffic: { readonly bytesIn: number; readonly bytesOut: number };
  /** Settles once when the process has exited; never rejects. */
  readonly exited: Promise<ExitStatus>;
  readonly #tail: StderrTail;
  #exitStatus: ExitStatus | undefined;
  #closing: Promise<void> | undefined;
  #orphanWatch: NodeJS.Timeout | undefined;
  #forgotten = false;
  /**
   * The process groups this server owns: the leader's, and a sandbox's own (its first
   * process runs in a session of its own, out of the leader's group). close() signals
   * them all and waits until every one is empty; the exit hook knows them all.
   */
  readonly #groups = new Map<number, GroupProbe>();
  #sandbox: SandboxStatus | undefined;
  #cleanup: (() => void) | undefined;

  /**
   * Starts a server. Resolves once the OS has started it; rejects with `spawn-failed`
   * (command not found, not executable, missing working directory) or `invalid-config`.
   */
  static async spawn(spec: ProcessSpec): Promise<ServerProcess> {
    const resolved = resolveSpec(spec);
    // Node reports a missing cwd as ENOENT of the command, which would send users looking for the wrong thing.
    await checkCwd(resolved);
    const launch = resolved.sandbox === undefined ? { ...directLaunch(resolved), status: undefined, cleanup: undefined } : await sandboxed(resolved);
    await loadSpawner();
    let child: Child;
    try {
      child = startChild(launch);
    } catch (error) {
      launch.cleanup?.();
      throw spawnFailed(resolved, error);
    }
    // Node sets a pid exactly when the OS has started the process. Attach to it before
    // anything else runs, so no early output is missed and the exit hook knows it at once.
    const server = child.pid === undefined ? undefined : new ServerProcess(child, resolved, launch);
    if (server === undefined) launch.cleanup?.();
    try {
      await spawned(child);
    } catch (error) {
      void server?.close(0);
      throw spawnFailed(resolved, error);
    }
    return server!;
  }

  private constructor(child: Child, spec: ResolvedSpec, launch: Launch & { status: SandboxStatus | undefined; cleanup: (() => void) | undefined }) {
    super();
    this.pid = child.pid!;
    this.#sandbox = launch.status;
    this.#cleanup = launch.cleanup;
    this.stdin = child.stdin;
    this.stdout = child.stdout;
    const pipes = { out: child.stdout as Readable & { bytesRead?: number }, in: child.stdin as Writable & { bytesWritten?: number } };
    this.traffic = {
      get bytesIn() {
        return pipes.out.bytesRead ?? 0;
      },
      get bytesOut() {
        return pipes.in.bytesWritten ?? 0;
      },
    };
    this.#tail = new StderrTail(spec.stderrTailLines, spec.stderrTailBytes);
    this.#addGroup(this.pid);
    if (launch.infoFd) this.#readSandboxInfo(child.stdio[3] as Readable | undefined);
    // After spawn, errors here only echo the exit (EPIPE, ECONNRESET); `exited` reports it. Unheard, they would crash the host.
    const ignore = () => {};
    child.on('error', ignore);
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on('error', ignore);
    holdUntilReaderCanAttach(this.stdout);
    const stderrDone = this.#drainStderr(child.stderr);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const status: ExitStatus = Object.freeze(signal ? { signal } : { exitCode: code ?? 0 });
        if (this.#closing === undefined) this.#forgetGroupsWhenEmpty();
        void withinTime(stderrDone, STDERR_FLUSH_MS).then(() => {
          this.#exitStatus = status;
          resolve(status);
          this.emit('exit', status);
        });
      });
    });
  }

  /** The sandbox the server runs in, if any: the tool and what it lets the server see. */
  get sandbox(): SandboxStatus | undefined {
    return this.#sandbox;
  }

  /** How the process ended; `undefined` while it runs. */
  get exitStatus(): ExitStatus | undefined {
    return this.#exitStatus;
  }

  get alive(): boolean {
    return this.#exitStatus === undefined;
  }

  /** A copy of the last stderr lines, oldest first. */
  stderrTail(): string[] {
    return this.#tail.lines();
  }

  /**
   * Stops the process and everything it started: ends stdin at once, SIGTERM to its
   * process group at `graceMs / 2`, SIGKILL at `graceMs`. Resolves when the group is
   * empty, and never later than `graceMs` + 1000 ms. Idempotent; never rejects.
   *
   * @param graceMs ms the server gets to exit by itself. Default 2000.
   */
  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.#closing ??= this.#terminate(Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : DEFAULT_CLOSE_GRACE_MS);
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #terminate(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs + CLOSE_HARD_BOUND_MS;
    // SIGTERM goes to the innermost group only: in a sandbox that is the server's (its first
    // process ignores it). bwrap itself dies of SIGTERM and takes the sandbox with it at once,
    // which would leave the server no time for its handler; it ends when the sandbox does.
    const groups = () => [...this.#groups.keys()].reverse();
    const term = unrefTimer(graceMs / 2, () => groups().slice(0, 1).forEach((pgid) => signalGroup(pgid, 'SIGTERM')));
    const kill = unrefTimer(graceMs, () => groups().forEach((pgid) => signalGroup(pgid, 'SIGKILL')));
    let empty = false;
    try {
      this.stdin.end();
      await withinTime(this.exited, deadline - Date.now());
      // A wrapper such as npx may be gone while what it started lives on in its group.
      while (!empty && Date.now() < deadline) {
        empty = (await withinTime(this.#groupsEmpty(), deadline - Date.now())) === true;
        if (!empty) await delay(Math.min(POLL_MS, deadline - Date.now()));
      }
    } catch {
      // close() never rejects; the exit hook remains for whatever is left.
    } finally {
      clearTimeout(term);
      clearTimeout(kill);
      if (empty) this.#forget();
      else this.#forgetGroupsWhenEmpty();
    }
  }

  #addGroup(pgid: number): void {
    if (this.#forgotten || this.#groups.has(pgid)) return;
    this.#groups.set(pgid, new GroupProbe(pgid));
    registerGroup(pgid);
  }

  async #groupsEmpty(): Promise<boolean> {
    for (const probe of this.#groups.values()) if (!(await probe.isEmpty())) return false;
    return true;
  }

  /**
   * bwrap writes `{"child-pid": N}` once its sandbox's first process runs: N leads the
   * group the server is in. Known, it is signalled and waited for like the leader's.
   */
  #readSandboxInfo(info: Readable | undefined): void {
    if (!info) return;
    let text = '';
    info.on('error', () => {});
    info.on('data', (chunk: Buffer) => {
      if (text.length < 4096) text += chunk.toString('utf8');
    });
    info.once('end', () => {
      const pid = Number((/"child-pid"\s*:\s*(\d+)/.exec(text) ?? [])[1]);
      if (Number.isSafeInteger(pid) && pid > 1) this.#addGroup(pid);
    });
  }

  #drainStderr(stderr: Readable): Promise<void> {
    const splitter = new LineSplitter();
    const onLine = (line: string) => {
      if (line.trim() === '') return;
      this.#tail.push(line);
      this.emit('stderr', line);
    };
    stderr.on('data', (chunk: Buffer) => splitter.push(chunk).forEach(onLine));
    return new Promise((resolve) => {
      stderr.once('close', () => {
        splitter.end().forEach(onLine);
        resolve();
      });
    });
  }

  #forget(): void {
    if (this.#forgotten) return;
    this.#forgotten = true;
    clearInterval(this.#orphanWatch);
    for (const pgid of this.#groups.keys()) unregisterGroup(pgid);
    this.#cleanup?.();
  }

  /** Unregisters the groups from the exit hook as soon as they are empty, so their numbers, once free for reuse, are never signalled. */
  #forgetGroupsWhenEmpty(): void {
    if (this.#forgotten || this.#orphanWatch !== undefined) return;
    let probing = false;
    const forgetIfEmpty = async () => {
      if (probing || this.#forgotten) return;
      probing = true;
      try {
        if (!(await this.#groupsEmpty())) return;
      } finally {
        probing = false;
      }
      this.#forget();
    };
    this.#orphanWatch = setInterval(() => void forgetIfEmpty(), ORPHAN_WATCH_MS).unref();
    void forgetIfEmpty();
  }
}

/** The sandbox tool's command line around the server's, or the spawn's error. */
async function sandboxed(spec: ResolvedSpec): Promise<Awaited<ReturnType<typeof sandboxLaunch>>> {
  try {
    return await sandboxLaunch({ name: spec.name, command: spec.command, args: spec.args, env: sandboxEnvironment(spec), cwd: spec.cwd, policy: spec.sandbox! });
  } catch (error) {
    if (error instanceof SandboxSetupError) throw spawnFailed(spec, error, error.message);
    throw error;
  }
}

async function checkCwd(spec: ResolvedSpec): Promise<void> {
  if (spec.cwd === undefined) return;
  const cwd = resolvePath(spec.cwd);
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(cwd)).isDirectory();
  } catch (error) {
    throw spawnFailed(spec, error, `working directory ${JSON.stringify(cwd)} does not exist`);
  }
  if (!isDirectory) throw spawnFailed(spec, undefined, `working directory ${JSON.stringify(cwd)} is not a directory`);
}

/**
 * execa resumes an unread stdout one macrotask after the spawn (with `buffer: false`),
 * so a reader attached a moment later would miss the server's first messages. A
 * 'readable' listener keeps the stream paused until then; removing it restores the
 * plain state: flowing if a 'data' reader attached meanwhile, otherwise waiting for one.
 */
function holdUntilReaderCanAttach(stdout: Readable): void {
  const hold = () => {};
  stdout.on('readable', hold);
  setImmediate(() => stdout.off('readable', hold));
}

function unrefTimer(ms: number, run: () => void): NodeJS.Timeout {
  return setTimeout(run, ms).unref();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => unrefTimer(Math.max(0, ms), resolve));
}

