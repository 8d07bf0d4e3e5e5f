import type { JsonRpcMessage, RequestId } from '../channel.js';
import { delay } from './retry-policy.js';
import { readSse } from './sse-reader.js';
import { parseMessages } from './parse-messages.js';

/** What a stream follower needs from its channel. */
export interface StreamHost {
  readonly maxMessageBytes: number;
  readonly isOpen: boolean;
  deliver(message: JsonRpcMessage, relatedTo: RequestId | undefined): void;
  skipped(text: string): void;
  /** The body was over `maxMessageBytes`: the channel ends. */
  oversized(bytes: number): void;
  /**
   * Opens the stream again with `Last-Event-ID` (undefined: a fresh GET stream).
   * Resolves undefined when there is nothing more to follow (405, a non-SSE answer,
   * a failure the host has already dealt with).
   */
  reopen(lastEventId: string | undefined, signal: AbortSignal): Promise<Response | undefined>;
}

export interface FollowOptions {
  /** The request whose answer this stream carries; undefined for the GET stream. */
  requestId?: RequestId;
  /** Whether a dropped stream may be resumed (legacy era only). */
  resumable: boolean;
  /** A GET stream without an event id is opened afresh; a request stream is not. */
  reopenWithoutId: boolean;
  maxReconnects: number;
  reconnectDelayMs: number;
  signal: AbortSignal;
}

/**
 * Follows one SSE stream to its end: each event's message is delivered (related to the
 * request for a request stream); a stream that drops before the request's answer is
 * resumed with `Last-Event-ID` after the server's `retry` delay, a bounded number of
 * times in a row (an event in between resets the count).
 */
export async function followStream(host: StreamHost, first: Response, options: FollowOptions): Promise<void> {
  let response: Response | undefined = first;
  let lastEventId: string | undefined;
  let retryMs: number | undefined;
  let answered = false;
  let misses = 0;
  while (response?.body) {
    const end = await readSse(response.body, {
      maxEventBytes: host.maxMessageBytes,
      signal: options.signal,
      onRetry: (ms) => {
        retryMs = ms;
      },
      onEvent: (event) => {
        if (event.id !== undefined) lastEventId = event.id;
        // A priming event (an id and no data) only gives the resumption point.
        if (event.data === '') return;
        misses = 0;
        const messages = parseMessages(event.data);
        if (!messages) return host.skipped(event.data);
        for (const message of messages) {
          if (options.requestId !== undefined && !('method' in message) && message.id === options.requestId) answered = true;
          host.deliver(message, options.requestId);
        }
      },
    });
    if (end.kind === 'oversized') return host.oversized(end.bytes);
    if (end.kind === 'aborted' || answered || !host.isOpen || !options.resumable) return;
    if (lastEventId === undefined && !options.reopenWithoutId) return;
    if (misses++ >= options.maxReconnects) return;
    await delay(retryMs ?? options.reconnectDelayMs, options.signal);
    if (options.signal.aborted || !host.isOpen) return;
    response = await host.reopen(lastEventId, options.signal);
  }
}
