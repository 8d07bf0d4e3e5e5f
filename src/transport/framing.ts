import type { Readable, Writable } from 'node:stream';
import { Disposable, Emitter } from 'vscode-jsonrpc';
import type { DataCallback, Event, Message, MessageReader, MessageWriter } from 'vscode-jsonrpc';
import { McpError } from '../errors.js';
// This module and the two framings import each other. That is safe only because nothing
// here or there touches the other's exports while the modules load: the framings use
// these helpers by composition (at construction), never `extends` them.
import { ContentLengthMessageReader, ContentLengthMessageWriter } from './content-length-framing.js';
import { LineMessageReader, LineMessageWriter } from './line-framing.js';

/** How messages are delimited on the wire: MCP stdio's one JSON object per line, or LSP-style `Content-Length` frames. */
export type Framing = 'newline' | 'content-length';

export interface FramingOptions {
  /**
   * Largest accepted message, in bytes of UTF-8 (a line without its line break, or a
   * `Content-Length` body). A bigger one is a `protocol-error` and ends the reader.
   * Default: {@link DEFAULT_MAX_MESSAGE_BYTES} (64 MiB).
   */
  maxMessageBytes?: number;
}

/** 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Longest noise text reported through `onNoise`, in characters; longer text is cut and ends with '…'. */
export const MAX_NOISE_CHARS = 1000;

/** A vscode-jsonrpc reader that also reports what it skipped: text that is not a JSON object. */
export interface LazyMessageReader extends MessageReader {
  /** Fires with each skipped line or body (cut to {@link MAX_NOISE_CHARS}); the stream goes on. */
  readonly onNoise: Event<string>;
}

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
  throw new McpError('invalid-config', `Expected the \`framing\` option to be "newline" or "content-length", got ${describe(framing)}`, {
    phase: 'config',
  });
}

function resolveMaxMessageBytes(options: FramingOptions | undefined): number {
  const value = options?.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new McpError('invalid-config', `Expected the \`maxMessageBytes\` option to be a positive integer, got ${describe(value)}`, {
      phase: 'config',
    });
  }
  return value;
}

function describe(value: unknown): string {
  return `\`${String(value)}\` (${typeof value})`;
}

/** `text` cut to `max` characters, with '…' appended when cut; never splits a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * Bytes received but not yet framed, kept as the chunks they arrived in so that a
 * message costs one copy when it is complete, not one per chunk.
 */
export class ChunkBuffer {
  private chunks: Buffer[] = [];
  private total = 0;

  get length(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.total += chunk.length;
  }

  /** The first `n` bytes as one Buffer, left in place; copies only when they span chunks. */
  peek(n: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= n) return first.subarray(0, n);
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    for (const chunk of this.chunks) {
      if (filled === n) break;
      filled += chunk.copy(out, filled, 0, Math.min(chunk.length, n - filled));
    }
    return out;
  }

  drop(n: number): void {
    let whole = 0;
    let left = n;
    while (left > 0 && this.chunks[whole].length <= left) left -= this.chunks[whole++].length;
    // One splice per call: shifting chunk by chunk would be quadratic in the chunk count.
    if (whole > 0) this.chunks.splice(0, whole);
    if (left > 0) this.chunks[0] = this.chunks[0].subarray(left);
    this.total -= n;
  }

  take(n: number): Buffer {
    const out = this.peek(n);
    this.drop(n);
    return out;
  }

  /** Everything buffered, then `tail`, as one Buffer; the buffer is left empty. */
  takeAll(tail?: Buffer): Buffer {
    if (tail !== undefined) this.push(tail);
    return this.take(this.total);
  }

  clear(): void {
    this.chunks = [];
    this.total = 0;
  }
}

/** What a framing does with the bytes that a {@link FrameSource} receives. */
export interface FrameDecoder {
  data(chunk: Buffer): void;
  /** The stream ended: frame whatever is left. */
  end(): void;
}

/**
 * The stream-facing half of a reader, shared by both framings: listens to the readable,
 * turns framed bytes into messages or noise, and stops for good on end, overflow or dispose.
 */
export class FrameSource {
  readonly maxBytes: number;
  /** Bytes of an incomplete frame; dropped when the source stops. */
  readonly pending = new ChunkBuffer();
  private readonly noiseEmitter = new Emitter<string>();
  private callback: DataCallback | undefined;
  private detach: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly readable: Readable,
    options: FramingOptions | undefined,
    private readonly events: { error(error: Error): void; close(): void },
  ) {
    this.maxBytes = resolveMaxMessageBytes(options);
  }

  get onNoise(): Event<string> {
    return this.noiseEmitter.event;
  }

  /** False once the source has stopped; a decoder checks it after each message it delivers. */
  get active(): boolean {
    return !this.stopped;
  }

  listen(callback: DataCallback, decoder: FrameDecoder): Disposable {
    if (this.callback !== undefined) throw new Error('listen() may be called only once per reader');
    this.callback = callback;
    if (this.stopped) return Disposable.create(() => {});
    const readable = this.readable;
    const onData = (chunk: Buffer | string): void => decoder.data(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const onEnd = (): void => {
      if (this.stopped) return;
      decoder.end();
      if (this.stopped) return;
      this.stop();
      this.events.close();
    };
    const onError = (error: Error): void => this.events.error(error);
    readable.on('data', onData).on('end', onEnd).on('close', onEnd).on('error', onError);
    this.detach = () => {
      readable.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onError);
    };
    return Disposable.create(() => this.stop());
  }

  /** Parses one frame's bytes and hands a JSON object to the callback; anything else is noise. */
  deliver(bytes: Buffer): void {
    const text = bytes.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (text.trim() !== '') this.noise(text);
      return;
    }
    // MCP dropped JSON-RPC batches in 2025-06-18, so an array is noise like any non-object.
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return this.noise(text);
    try {
      this.callback?.(value as Message);
    } catch (error) {
      // The callback runs inside the stream's 'data' handler, where a throw would be uncaught.
      this.events.error(error instanceof Error ? error : new Error(String(error)));
    }
  }

  noise(text: string): void {
    this.noiseEmitter.fire(cut(text, MAX_NOISE_CHARS));
  }

  /** A protocol violation: report it, close, and consume nothing more. */
  fail(message: string): void {
    if (this.stopped) return;
    this.stop();
    this.events.error(new McpError('protocol-error', message));
    this.events.close();
  }

  tooLarge(detail: string): void {
    this.fail(`message exceeds the limit of ${this.maxBytes} bytes (maxMessageBytes): ${detail}; the connection is closed`);
  }

  stop(): void {
    this.stopped = true;
    this.detach?.();
    this.detach = undefined;
    this.pending.clear();
  }

  dispose(): void {
    this.stop();
    this.noiseEmitter.dispose();
  }
}

interface PendingWrite {
  frame: string;
  message: Message;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The stream-facing half of a writer, shared by both framings. Each frame is one
 * `write` call, so frames never interleave; while the stream asks to wait for 'drain',
 * frames queue in order instead of piling up in the stream's own buffer.
 */
export class FrameSink {
  private queue: (PendingWrite | undefined)[] = [];
  private head = 0;
  private congested = false;
  private ending = false;
  private failure: Error | undefined;
  private errorCount = 0;
  private readonly onDrain = (): void => this.flush();
  private readonly onError = (error: Error): void => this.failAll(error);
  private readonly onClose = (): void => {
    this.failAll(new Error('cannot write a message: the stream is closed'));
    this.events.close();
  };

  constructor(
    private readonly writable: Writable,
    private readonly encode: (message: Message) => string,
    private readonly events: { error(error: Error, message: Message, count: number): void; close(): void },
  ) {
    writable.on('drain', this.onDrain).on('error', this.onError).on('close', this.onClose);
  }

  send(message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let frame: string;
      try {
        frame = this.encode(message);
      } catch (error) {
        return this.reject({ frame: '', message, resolve, reject }, error instanceof Error ? error : new Error(String(error)));
      }
      const write: PendingWrite = { frame, message, resolve, reject };
      if (this.failure !== undefined) this.reject(write, this.failure);
      else if (this.ending) this.reject(write, new Error('cannot write a message: the writer was ended'));
      else if (this.congested) this.queue.push(write);
      else this.writeNow(write);
    });
  }

  /** Ends the stream once the queued frames are written. */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (!this.congested) this.endNow();
  }

  dispose(): void {
    this.writable.off('drain', this.onDrain).off('error', this.onError).off('close', this.onClose);
    this.failAll(new Error('cannot write a message: the writer was disposed'));
  }

  private writeNow(write: PendingWrite): void {
    if (!this.writable.writable) {
      this.failAll(new Error('cannot write a message: the stream is closed or ended'));
      return this.reject(write, this.failure!);
    }
    const accepted = this.writable.write(write.frame, (error) => {
      if (!error) return write.resolve();
      this.failure ??= error;
      this.reject(write, error);
      this.failAll(error);
    });
    if (!accepted) this.congested = true;
  }

  private flush(): void {
    this.congested = false;
    while (!this.congested && this.head < this.queue.length) {
      const write = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      this.writeNow(write);
    }
    if (this.head < this.queue.length) return;
    this.queue = [];
    this.head = 0;
    if (this.ending) this.endNow();
  }

  private endNow(): void {
    if (!this.writable.writableEnded && !this.writable.destroyed) this.writable.end();
  }

  /** From now on every write fails with `error` (the first one wins), starting with the queued ones. */
  private failAll(error: Error): void {
    this.failure ??= error;
    const queued = this.queue;
    const head = this.head;
    this.queue = [];
    this.head = 0;
    for (let i = head; i < queued.length; i++) this.reject(queued[i]!, this.failure);
  }

  private reject(write: PendingWrite, error: Error): void {
    this.events.error(error, write.message, ++this.errorCount);
    write.reject(error);
  }
}
