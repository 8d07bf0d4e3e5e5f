import type { Readable, Writable } from 'node:stream';
import type { MessageWriter } from 'vscode-jsonrpc';
import { ContentLengthMessageReader, ContentLengthMessageWriter } from './content-length-framing.js';
import type { LazyMessageReader } from './framed-reader.js';
import { invalidOption, type FramingOptions } from './framing-options.js';
import { LineMessageReader, LineMessageWriter } from './line-framing.js';

// Declared next to the code that needs them, so that the framings never import this module.
export type { LazyMessageReader } from './framed-reader.js';
export { DEFAULT_MAX_MESSAGE_BYTES, type FramingOptions } from './framing-options.js';

/** How messages are delimited on the wire: MCP stdio's one JSON object per line, or LSP-style `Content-Length` frames. */
export type Framing = 'newline' | 'content-length';

/** Builds the reader and writer of one connection for the given framing. */
export function createMessageIO(
  framing: Framing,
  readable: Readable,
  writable: Writable,
  options?: FramingOptions,
): { reader: LazyMessageReader; writer: MessageWriter } {
  if (framing === 'newline') {
    return { reader: new LineMessageReader(readable, options), writer: new LineMessageWriter(writable) };
  }
  if (framing === 'content-length') {
    return { reader: new ContentLengthMessageReader(readable, options), writer: new ContentLengthMessageWriter(writable) };
  }
  throw invalidOption('framing', '"newline" or "content-length"', framing);
}
