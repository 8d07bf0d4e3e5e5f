import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpError } from '../../errors.js';

export interface LockOptions {
  /** Longest wait for a lock another live process holds, in ms. Default 15000. */
  timeoutMs?: number;
  /** A lock older than this is a leftover whatever its holder, in ms. Default 20000. */
  staleMs?: number;
}

const POLL_MS = 20;

/**
 * Runs `work` holding the lock file `path` (created exclusively, holding the pid and a
 * token). A lock whose holder is dead or that is older than `staleMs` was left by a
 * crash and is broken. Serializes short steps only (starting the daemon, binding the
 * socket); never held across a long wait.
 */
export async function withLock<T>(path: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const token = `${process.pid} ${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  const staleMs = options.staleMs ?? 20_000;
  for (;;) {
    if (tryCreate(path, token)) break;
    if (isStale(path, staleMs)) {
      removeIf(path, undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new McpError('unavailable', `timed out waiting for the lock ${path} (held by pid ${holderPid(path) ?? 'unknown'})`, {});
    }
    await sleep(POLL_MS);
  }
  try {
    return await work();
  } finally {
    removeIf(path, token);
  }
}

function tryCreate(path: string, token: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new McpError('unavailable', `cannot create the lock ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    writeSync(fd, token);
  } finally {
    closeSync(fd);
  }
  return true;
}

function holderPid(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').split(' ')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isStale(path: string, staleMs: number): boolean {
  let age: number;
  try {
    age = Date.now() - statSync(path).mtimeMs;
  } catch {
    return false; // gone: the next try takes it
  }
  if (age > staleMs) return true;
  const pid = holderPid(path);
  // A lock being written has no pid yet: give it a moment before calling it stale.
  if (pid === undefined) return age > 1000;
  return !alive(pid);
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the lock if it still holds `token` (any content when undefined). */
function removeIf(path: string, token: string | undefined): void {
  try {
    if (token !== undefined && readFileSync(path, 'utf8') !== token) return;
    unlinkSync(path);
  } catch {
    // Gone already.
  }
}
