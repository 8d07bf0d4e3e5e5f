import type { Message } from 'vscode-jsonrpc';
import { cut, FramedMessageReader } from './framed-reader.js';
import { FramedMessageWriter } from './framed-writer.js';

const HEADER_END = '\r\n\r\n';
/** Longest header block accepted (8 KiB); real ones are a few dozen bytes. */
const MAX_HEADER_BYTES = 8192;

/**
 * Reads LSP-style frames: `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8 JSON.
 * Other headers (such as `Content-Type`) are ignored. A malformed header block is a
 * `protocol-error` (`onError`, then `onClose`, then nothing more is read), and so is an
 * announced length over `maxMessageBytes`, rejected before any of the body is buffered.
 * A body that is not a JSON object is skipped and reported through {@link onNoise}.
 */
export class ContentLengthMessageReader extends FramedMessageReader {
  /** Body length announced by the current frame's header; -1 while the header is still arriving. */
  private bodyLength = -1;

  protected override onData(chunk: Buffer): void {
    const pending = this.pending;
    pending.push(chunk);
    while (this.active) {
      if (this.bodyLength < 0 && !this.readHeader()) return;
      if (pending.length < this.bodyLength) return;
      const body = pending.take(this.bodyLength);
      this.bodyLength = -1;
      this.deliver(body);
    }
  }

  protected override onEnd(): void {
    const pending = this.pending;
    if (pending.length === 0) return;
    // A frame cut off by EOF: even if the bytes happen to parse, they are not the message that was announced.
    const rest = pending.takeAll().toString('utf8');
    if (rest.trim() !== '') this.noise(rest);
  }

  /** Consumes a complete header block and sets {@link bodyLength}; false when it has not all arrived (or failed). */
  private readHeader(): boolean {
    const pending = this.pending;
    // Bounded by MAX_HEADER_BYTES, so re-reading it as more chunks arrive stays cheap.
    const head = pending.peek(Math.min(pending.length, MAX_HEADER_BYTES));
    const end = head.indexOf(HEADER_END);
    if (end === -1) {
      if (pending.length >= MAX_HEADER_BYTES) this.malformed(head.toString('latin1'), `no end of headers within ${MAX_HEADER_BYTES} bytes`);
      return false;
    }
    const text = head.toString('latin1', 0, end);
    const length = parseContentLength(text);
    if (typeof length === 'string') {
      this.malformed(text, length);
      return false;
    }
    if (length > this.maxBytes) {
      this.tooLarge(`Content-Length announces ${length} bytes`);
      return false;
    }
    pending.drop(end + HEADER_END.length);
    this.bodyLength = length;
    return true;
  }

  private malformed(header: string, problem: string): void {
    this.fail(`malformed Content-Length header ${JSON.stringify(cut(header, 200))}: ${problem}`);
  }
}

/** The announced body length, or a description of what is wrong with the header block. */
function parseContentLength(header: string): number | string {
  let length: number | undefined;
  for (const line of header.split('\r\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return `header line ${JSON.stringify(cut(line, 80))} has no name`;
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d{1,15}$/.test(value)) return `Content-Length ${JSON.stringify(cut(value, 80))} is not a byte count`;
    length = Number(value);
  }
  return length ?? 'there is no Content-Length';
}

/**
 * Writes each message as `Content-Length: <UTF-8 byte length>\r\n\r\n<JSON>` in one
 * `write` call, waiting for 'drain' when the stream is congested. When the stream errors
 * or closes, pending and later writes reject and `onError` fires for each.
 */
export class ContentLengthMessageWriter extends FramedMessageWriter {
  protected override encode(message: Message): string {
    const body = JSON.stringify(message);
    return `Content-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n${body}`;
  }
}
