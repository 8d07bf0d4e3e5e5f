import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import type { ProcessSpec } from '../../src/transport/stdio/server-process.js';
import { isAlive } from '../support/fixtures.js';

/** Absolute path of a test fixture. */
export const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/** A spec that runs a fixture with this Node, named after the fixture. */
export const nodeSpec = (script: string, args: string[] = [], extra: Partial<ProcessSpec> = {}): ProcessSpec => ({
  name: script.replace(/\.mjs$/, ''),
  command: process.execPath,
  args: [fixture(script), ...args],
  ...extra,
});

/** Whether `pid` is dead (a zombie counts: it has exited). */
export const isGone = (pid: number): boolean => !isAlive(pid);

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits for `promise` at most `ms`; says whether it settled in time. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a stream line by line; `next()` gives the next line, waiting at most `timeoutMs`. */
export function lineReader(stream: Readable) {
  const ready: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else ready.push(line);
    }
  });
  return {
    next(timeoutMs = 5000): Promise<string> {
      const line = ready.shift();
      if (line !== undefined) return Promise.resolve(line);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(onLine), 1);
          reject(new Error(`no line within ${timeoutMs} ms`));
        }, timeoutMs);
        const onLine = (l: string) => {
          clearTimeout(timer);
          resolve(l);
        };
        waiting.push(onLine);
      });
    },
  };
}
