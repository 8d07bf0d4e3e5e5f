import type { Message } from 'vscode-jsonrpc';
import { FramedMessageReader } from './framed-reader.js';
import { FramedMessageWriter } from './framed-writer.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads newline-delimited JSON, MCP's stdio framing: one JSON object per line, `\n` or
 * `\r\n` endings, blank lines ignored. A line that is not a JSON object (a stray
 * `console.log`) is skipped and reported through {@link onNoise}. A line longer than
 * `maxMessageBytes` is a `protocol-error`: the reader reports it, closes, and stops
 * reading without ever buffering much more than the limit.
 */
export class LineMessageReader extends FramedMessageReader {
  protected override onData(chunk: Buffer): void {
    const pending = this.pending;
    // One spare byte for the '\r' of a '\r\n' ending, which is not part of the message.
    const maxLine = this.maxBytes + 1;
    let start = 0;
    let newline = chunk.indexOf(LF);
    while (newline !== -1) {
      if (pending.length + newline - start > maxLine) return this.tooLarge(`a line of ${pending.length + newline - start} bytes`);
      // A line within the chunk is read where it lies: no Buffer object per line.
      if (pending.length === 0) this.onLine(chunk, start, newline);
      else {
        const line = pending.takeAll(chunk.subarray(start, newline));
        this.onLine(line, 0, line.length);
      }
      if (!this.active) return;
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (start === chunk.length) return;
    pending.push(start === 0 ? chunk : chunk.subarray(start));
    // Checked before the line is complete, so an endless line cannot exhaust memory.
    if (pending.length > maxLine) this.tooLarge(`more than ${this.maxBytes} bytes without a line break`);
  }

  protected override onEnd(): void {
    if (this.pending.length === 0) return;
    const line = this.pending.takeAll();
    this.onLine(line, 0, line.length);
  }

  /** The line in `buffer` from `start` up to `end` (its '\n' excluded). */
  private onLine(buffer: Buffer, start: number, end: number): void {
    if (end > start && buffer[end - 1] === CR) end--;
    if (end === start) return;
    if (end - start > this.maxBytes) return this.tooLarge(`a line of ${end - start} bytes`);
    this.deliver(buffer, start, end);
  }
}

/**
 * Writes each message as one line of JSON (`JSON.stringify` never emits a raw newline)
 * in one `write` call, waiting for 'drain' when the stream is congested. When the stream
 * errors or closes, pending and later writes reject and `onError` fires for each.
 */
export class LineMessageWriter extends FramedMessageWriter {
  protected override encode(message: Message): string {
    return `${JSON.stringify(message)}\n`;
  }
}
