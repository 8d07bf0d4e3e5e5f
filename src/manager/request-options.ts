import type { RequestOptions } from '../protocol/client.js';
import type { CallOptions, Progress } from '../protocol/types.js';
import type { Caller } from './host-handlers.js';

/**
 * What the manager sends a request with: the call's own options, who makes it (whose
 * handlers answer the server's questions about it) and, on a server that stops when idle,
 * progress counted as activity. One shape for every request, so the request path meets one
 * kind of object, and no spread (slow on Node 20, see copy-with.ts). A tool call is its own
 * options (see `ToolCall`).
 */
export function requestOptions(
  options: CallOptions,
  caller: Caller,
  touch: () => void,
  stopsWhenIdle: boolean,
): RequestOptions {
  return {
    timeout: options.timeout,
    maxTotalTimeout: options.maxTotalTimeout,
    resetTimeoutOnProgress: options.resetTimeoutOnProgress,
    startedAt: options.startedAt,
    signal: options.signal,
    onProgress: stopsWhenIdle ? withTouch(options.onProgress, touch) : options.onProgress,
    handlers: caller.handlers,
    caller,
  };
}

/** Progress is activity too, on a server that stops when idle. */
export function withTouch(onProgress: ((progress: Progress) => void) | undefined, touch: () => void): (progress: Progress) => void {
  return (progress) => (touch(), onProgress?.(progress));
}
