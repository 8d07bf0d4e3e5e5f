import type { RequestOptions } from '../../protocol/client.js';
import type { CallOptions, Progress } from '../../protocol/types.js';
import type { Caller } from '../scope/host-handlers.js';

/**
 * What the manager sends a request with: the call's own options and who makes it (whose
 * handlers answer the server's questions about it). A tool call is its own options (see
 * `ToolCall`).
 */
export function requestOptions(options: CallOptions, caller: Caller, touch: () => void, stopsWhenIdle: boolean): RequestOptions {
  return takeCallOptions({ handlers: caller.handlers, caller }, options, touch, stopsWhenIdle);
}

/**
 * Writes the call's own options onto a request's and returns it; on a server that stops
 * when idle, progress counts as activity too. Field by field, no spread (slow on Node 20,
 * see copy-with.ts).
 */
export function takeCallOptions<T extends RequestOptions>(target: T, options: CallOptions, touch: () => void, stopsWhenIdle: boolean): T {
  target.timeout = options.timeout;
  target.maxTotalTimeout = options.maxTotalTimeout;
  target.resetTimeoutOnProgress = options.resetTimeoutOnProgress;
  target.startedAt = options.startedAt;
  target.signal = options.signal;
  const onProgress = options.onProgress;
  target.onProgress = stopsWhenIdle ? (progress: Progress) => (touch(), onProgress?.(progress)) : onProgress;
  return target;
}
