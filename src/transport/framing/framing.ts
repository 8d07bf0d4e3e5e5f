import type { Readable, Writable } from 'node:stream';
import { ContentLengthMessageReader, ContentLengthMessageWriter } from './content-length-framing.js';
import type { LazyMessageReader } from './framed-reader.js';
import { type FramedMessageWriter, resolveMaxQueuedBytes, type WriterOptions } from './framed-writer.js';
import { invalidOption, type FramingOptions } from './framing-options.js';
import { LineMessageReader, LineMessageWriter } from './line-framing.js';

// Declared next to the code that needs them, so that the framings never import this module.
export type { LazyMessageReader } from './framed-reader.js';
export { DEFAULT_MAX_MESSAGE_BYTES, type FramingOptions } from './framing-options.js';
export { DEFAULT_MAX_QUEUED_BYTES, type FramedMessageWriter, type WriterOptions } from './framed-writer.js';

/** How messages are delimited on the wire: MCP stdio's one JSON object per line, or LSP-style `Content-Length` frames. */
export type Framing = 'newline' | 'content-length';

/**
 * Builds the reader and writer of one connection for the given framing. The writer's
 * `drop(id)` takes a request's frame out of its queue once nobody waits for the answer.
 */
export function createMessageIO(
  framing: Framing,
  readable: Readable,
  writable: Writable,
  options?: FramingOptions & WriterOptions,
): { reader: LazyMessageReader; writer: FramedMessageWriter } {
  // Checked before either half attaches to its stream.
  resolveMaxQueuedBytes(options);
  if (framing === 'newline') {
    return { reader: new LineMessageReader(readable, options), writer: new LineMessageWriter(writable, options) };
  }
  if (framing === 'content-length') {
    return { reader: new ContentLengthMessageReader(readable, options), writer: new ContentLengthMessageWriter(writable, options) };
  }
  throw invalidOption('framing', '"newline" or "content-length"', framing);
}
