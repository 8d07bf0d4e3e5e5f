import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** How one SSE stream ended. */
export type SseEnd =
  | { kind: 'done' }
  | { kind: 'aborted' }
  | { kind: 'dropped'; cause: unknown }
  | { kind: 'oversized'; bytes: number };

export interface SseReadOptions {
  maxEventBytes: number;
  onEvent(event: EventSourceMessage): void;
  /** The server's `retry:` field, in ms. */
  onRetry?(ms: number): void;
  signal?: AbortSignal;
}

/**
 * Reads an SSE body to its end with `eventsource-parser`, never buffering more than
 * `maxEventBytes` for one event: a larger event stops the read and cancels the body.
 */
export async function readSse(body: ReadableStream<Uint8Array>, options: SseReadOptions): Promise<SseEnd> {
  const decoder = new TextDecoder();
  // Bytes fed since the last event was dispatched: a bound on what the parser holds.
  let pending = 0;
  let oversized = false;
  const parser = createParser({
    onEvent: (event) => {
      pending = 0;
      if (Buffer.byteLength(event.data, 'utf8') > options.maxEventBytes) {
        oversized = true;
        return;
      }
      if (!oversized) options.onEvent(event);
    },
    onRetry: (ms) => options.onRetry?.(ms),
  });
  const reader = body.getReader();
  try {
    for (;;) {
      if (options.signal?.aborted) return { kind: 'aborted' };
      const { done, value } = await reader.read();
      if (done) {
        parser.feed(decoder.decode());
        return oversized ? { kind: 'oversized', bytes: pending } : { kind: 'done' };
      }
      pending += value.byteLength;
      // A little slack for the `data:` prefixes and line breaks of one event.
      if (pending > options.maxEventBytes + 4096) oversized = true;
      if (!oversized) parser.feed(decoder.decode(value, { stream: true }));
      if (oversized) return { kind: 'oversized', bytes: pending };
    }
  } catch (error) {
    if (options.signal?.aborted) return { kind: 'aborted' };
    return { kind: 'dropped', cause: error };
  } finally {
    reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
