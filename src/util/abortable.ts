import { serverLabel, stoppedBy } from '../errors.js';

/**
 * Waits for `work` unless `signal` aborts first, then rejects with `cancelled` (or
 * `closed`: see {@link stoppedBy}). The work itself goes on (a server start is shared by
 * other callers); only this wait ends.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string, server?: string): Promise<T> {
  if (!signal) return work;
  const cancelled = () => stoppedBy(signal, `${serverLabel(server)}${what}`, { server });
  if (signal.aborted) {
    // Nobody waits for the work any more: its failure (a start cut by shutdown) must not go unhandled.
    work.catch(() => undefined);
    return Promise.reject(cancelled());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
