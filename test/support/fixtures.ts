import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { StdioServerConfig } from '../../src/protocol/client.js';

export const repoRoot = resolve(import.meta.dirname, '../..');

/** A server config that runs `test/fixtures/<name>` with this Node. */
export function fixture(name: string, ...args: string[]): StdioServerConfig & { command: string; args: string[] } {
  return { command: process.execPath, args: [resolve(repoRoot, 'test/fixtures', name), ...args] };
}

/** A server config that runs one of the reference servers installed from npm. */
export function referenceServer(pkg: 'everything' | 'filesystem' | 'memory', ...args: string[]): StdioServerConfig & { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: [resolve(repoRoot, `node_modules/@modelcontextprotocol/server-${pkg}/dist/index.js`), ...args],
  };
}

/**
 * True while a process with this pid exists. A zombie counts as dead: it has exited and
 * only waits to be reaped (PID 1 on this machine reaps orphans only every second or two).
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false; // reaped between the two looks
  }
}

/** SIGKILLs every pid a test noted and empties the list (for an afterEach: a failed test leaves nothing behind). */
export function killLeftovers(pids: number[]): void {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
}

/** Polls `check` until it holds or `ms` pass; returns whether it held. */
export async function waitFor(check: () => boolean, ms = 5000, every = 10): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, every));
  }
  return true;
}

/** The text of a tool result's content blocks, joined by newlines. */
export function textOf(result: { content: unknown[] }): string {
  return (result.content as { text?: string }[]).map((c) => c.text ?? '').join('\n');
}
