import type { RequestOptions } from '../protocol/client.js';
import type { CallOptions } from '../protocol/types.js';
import type { Caller } from './host-handlers.js';

/**
 * What the manager sends a request with: the call's own options, who makes it (whose
 * handlers answer the server's questions about it) and, on a server that stops when idle,
 * progress counted as activity. One shape for every request, so the request path meets one
 * kind of object, and no spread (slow on Node 20, see copy-with.ts). `began`: when the call
 * began, if the caller's options do not say (a clock reading the request need not repeat).
 */
export function requestOptions(
  options: CallOptions,
  caller: Caller,
  touch: () => void,
  stopsWhenIdle: boolean,
  toolCall?: { name: string; arguments: object },
  began?: number,
): RequestOptions {
  const onProgress = options.onProgress;
  return {
    timeout: options.timeout,
    maxTotalTimeout: options.maxTotalTimeout,
    resetTimeoutOnProgress: options.resetTimeoutOnProgress,
    startedAt: options.startedAt ?? began,
    signal: options.signal,
    onProgress: stopsWhenIdle ? (progress) => (touch(), onProgress?.(progress)) : onProgress,
    handlers: caller.handlers,
    caller,
    toolCall,
  };
}
