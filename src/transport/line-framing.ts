import type { Readable, Writable } from 'node:stream';
import { AbstractMessageReader, AbstractMessageWriter } from 'vscode-jsonrpc';
import type { DataCallback, Disposable, Event, Message, MessageWriter } from 'vscode-jsonrpc';
import { FrameSink, FrameSource } from './framing.js';
import type { FramingOptions, LazyMessageReader } from './framing.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * Reads newline-delimited JSON, MCP's stdio framing: one JSON object per line, `\n` or
 * `\r\n` endings, blank lines ignored. A line that is not a JSON object (a stray
 * `console.log`) is skipped and reported through {@link onNoise}. A line longer than
 * `maxMessageBytes` is a `protocol-error`: the reader reports it, closes, and stops
 * reading without ever buffering much more than the limit.
 */
export class LineMessageReader extends AbstractMessageReader implements LazyMessageReader {
  private readonly source: FrameSource;

  constructor(readable: Readable, options?: FramingOptions) {
    super();
    this.source = new FrameSource(readable, options, {
      error: (error) => this.fireError(error),
      close: () => this.fireClose(),
    });
  }

  get onNoise(): Event<string> {
    return this.source.onNoise;
  }

  listen(callback: DataCallback): Disposable {
    return this.source.listen(callback, { data: (chunk) => this.onData(chunk), end: () => this.onEnd() });
  }

  override dispose(): void {
    this.source.dispose();
    super.dispose();
  }

  private onData(chunk: Buffer): void {
    const source = this.source;
    const pending = source.pending;
    // One spare byte for the '\r' of a '\r\n' ending, which is not part of the message.
    const maxLine = source.maxBytes + 1;
    let start = 0;
    let newline = chunk.indexOf(LF);
    while (newline !== -1) {
      if (pending.length + newline - start > maxLine) return source.tooLarge(`a line of ${pending.length + newline - start} bytes`);
      const piece = chunk.subarray(start, newline);
      this.onLine(pending.length === 0 ? piece : pending.takeAll(piece));
      if (!source.active) return;
      start = newline + 1;
      newline = chunk.indexOf(LF, start);
    }
    if (start === chunk.length) return;
    pending.push(start === 0 ? chunk : chunk.subarray(start));
    // Checked before the line is complete, so an endless line cannot exhaust memory.
    if (pending.length > maxLine) source.tooLarge(`more than ${source.maxBytes} bytes without a line break`);
  }

  private onLine(line: Buffer): void {
    const body = line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, -1) : line;
    if (body.length === 0) return;
    if (body.length > this.source.maxBytes) return this.source.tooLarge(`a line of ${body.length} bytes`);
    this.source.deliver(body);
  }

  private onEnd(): void {
    if (this.source.pending.length > 0) this.onLine(this.source.pending.takeAll());
  }
}

/**
 * Writes each message as one line of JSON (`JSON.stringify` never emits a raw newline)
 * in one `write` call, waiting for 'drain' when the stream is congested. When the stream
 * errors or closes, pending and later writes reject and `onError` fires for each.
 */
export class LineMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private readonly sink: FrameSink;

  constructor(writable: Writable) {
    super();
    this.sink = new FrameSink(writable, (message) => `${JSON.stringify(message)}\n`, {
      error: (error, message, count) => this.fireError(error, message, count),
      close: () => this.fireClose(),
    });
  }

  write(message: Message): Promise<void> {
    return this.sink.send(message);
  }

  end(): void {
    this.sink.end();
  }

  override dispose(): void {
    this.sink.dispose();
    super.dispose();
  }
}
