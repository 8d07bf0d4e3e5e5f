/**
 * Requests that may be sent again when the first attempt got no answer: they read and
 * change nothing (or, like `initialize`, start over cleanly). `tools/call` is never here:
 * a tool need not be idempotent, and a lost answer does not mean the call did not run.
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'ping',
  'server/discover',
  'initialize',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
]);

/** HTTP answers worth one more try for an idempotent request: the server or a proxy was briefly unable. */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([502, 503, 504]);

export interface RetryOptions {
  /** Extra attempts after the first. Default 2. */
  attempts: number;
  /** Delay before the first retry, doubled each time. Default 100 ms. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 2, baseDelayMs: 100 };

/** Waits `ms`, or less when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
