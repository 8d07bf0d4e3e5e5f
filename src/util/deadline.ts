import type pTimeout from 'p-timeout';
import { serverLabel, stoppedBy } from '../errors.js';

/** What may end a wait before its work settles. */
export interface WaitBound {
  /** The most the wait may last, in ms; none: unbounded. */
  ms?: number;
  /**
   * Rejects the wait with this (made before the timer starts, so its stack points at the
   * caller) when `ms` passes; without it, the wait resolves with undefined then.
   */
  timedOut?: Error;
  /** Ends the wait when it aborts: it rejects with `cancelled` (or `closed`, see {@link stoppedBy}) naming `what`. */
  signal?: AbortSignal;
  what?: string;
  server?: string;
}

// p-timeout loads with the first bounded wait: it is the one package an import of lazy-mcp
// would otherwise load, and resolving a package's exports costs a fresh process ~1-2 ms.
let timeoutModule: Promise<typeof import('p-timeout')> | undefined;
/** p-timeout, loaded once. */
export const loadPTimeout = (): Promise<typeof import('p-timeout')> => (timeoutModule ??= import('p-timeout'));

/** Timers that never keep the process alive: a bound on a wait must not become a reason to wait. */
const UNREF_TIMERS = {
  setTimeout: (run: () => void, ms: number) => setTimeout(run, ms).unref(),
  clearTimeout: (timer: NodeJS.Timeout) => clearTimeout(timer),
} as unknown as NonNullable<Parameters<typeof pTimeout>[1]['customTimers']>;

/**
 * The one bounded wait: `work`'s outcome, unless `ms` passes (then `timedOut`) or `signal`
 * aborts first. Only the wait ends; the work goes on (a server start is shared by other
 * callers), and its failure after the wait gave up is never left unhandled.
 */
export function bounded<T>(work: Promise<T>, bound: WaitBound): Promise<T> {
  const { ms, signal } = bound;
  let waited = work;
  if (signal) {
    const cancelled = () => stoppedBy(signal, `${serverLabel(bound.server)}${bound.what ?? 'waiting'}`, { server: bound.server });
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(cancelled());
    }
    waited = new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(cancelled());
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
  if (ms === undefined || ms === Infinity) return waited;
  // Both handled at once: either may fail while p-timeout loads (a process's first bounded wait).
  work.catch(() => undefined);
  waited.catch(() => undefined);
  return loadPTimeout().then(({ default: timeLimit }) => timeLimit(waited, { milliseconds: Math.max(0, ms), message: bound.timedOut ?? false, customTimers: UNREF_TIMERS }));
}

/** Waits for `work` unless `signal` aborts first (see {@link bounded}). */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string, server?: string): Promise<T> {
  return signal ? bounded(work, { signal, what, server }) : work;
}

/** `promise`'s value if it settles within `ms`, else `undefined`; never rejects (see {@link bounded}). */
export function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return bounded<T | undefined>(
    promise.catch(() => undefined),
    { ms },
  );
}
