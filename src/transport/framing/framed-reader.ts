import type { Readable } from 'node:stream';
import { AbstractMessageReader, Disposable, Emitter } from './jsonrpc-base.js';
import type { DataCallback, Event, Message, MessageReader } from 'vscode-jsonrpc';
import { McpError } from '../../errors.js';
import { ChunkBuffer } from './chunk-buffer.js';
import { resolveMaxMessageBytes, type FramingOptions } from './framing-options.js';

/** Longest noise text reported through `onNoise`, in characters; longer text is cut and ends with '…'. */
export const MAX_NOISE_CHARS = 1000;

/** A vscode-jsonrpc reader that also reports what it skipped: text that is not a JSON object. */
export interface LazyMessageReader extends MessageReader {
  /** Fires with each skipped line or body (cut to {@link MAX_NOISE_CHARS}); the stream goes on. */
  readonly onNoise: Event<string>;
}

/** `text` cut to `max` characters, with '…' appended when cut; never splits a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * The stream-facing half of a reader, shared by both framings: listens to the readable,
 * turns framed bytes into messages or noise, and stops for good on end, overflow or
 * dispose. A framing supplies {@link onData} and {@link onEnd}.
 */
export abstract class FramedMessageReader extends AbstractMessageReader implements LazyMessageReader {
  protected readonly maxBytes: number;
  /** Bytes of an incomplete frame; dropped when the reader stops. */
  protected readonly pending = new ChunkBuffer();
  private readonly noiseEmitter = new Emitter<string>();
  private callback: DataCallback | undefined;
  private detach: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly readable: Readable,
    options?: FramingOptions,
  ) {
    super();
    this.maxBytes = resolveMaxMessageBytes(options);
  }

  get onNoise(): Event<string> {
    return this.noiseEmitter.event;
  }

  listen(callback: DataCallback): Disposable {
    if (this.callback !== undefined) throw new Error('listen() may be called only once per reader');
    this.callback = callback;
    if (this.stopped) return Disposable.create(() => {});
    const readable = this.readable;
    const handleData = (chunk: Buffer | string): void => this.onData(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    const handleEnd = (): void => {
      if (this.stopped) return;
      this.onEnd();
      if (this.stopped) return;
      this.stop();
      this.fireClose();
    };
    const handleError = (error: Error): void => this.fireError(error);
    readable.on('data', handleData).on('end', handleEnd).on('close', handleEnd).on('error', handleError);
    this.detach = () => {
      readable.off('data', handleData).off('end', handleEnd).off('close', handleEnd).off('error', handleError);
    };
    return Disposable.create(() => this.stop());
  }

  override dispose(): void {
    this.stop();
    this.noiseEmitter.dispose();
    super.dispose();
  }

  /** Frames the bytes that arrived; after each message it delivers, it must return if no longer {@link active}. */
  protected abstract onData(chunk: Buffer): void;

  /** The stream ended: frame whatever is left in {@link pending}. */
  protected abstract onEnd(): void;

  /** False once the reader has stopped. */
  protected get active(): boolean {
    return !this.stopped;
  }

  /** Parses one frame's bytes (from `start` to `end`) and hands a JSON object to the callback; anything else is noise. */
  protected deliver(bytes: Buffer, start = 0, end = bytes.length): void {
    const text = bytes.toString('utf8', start, end);
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
      this.fireError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  protected noise(text: string): void {
    this.noiseEmitter.fire(cut(text, MAX_NOISE_CHARS));
  }

  /** A protocol violation: report it, close, and consume nothing more. */
  protected fail(message: string): void {
    if (this.stopped) return;
    this.stop();
    this.fireError(new McpError('protocol-error', message));
    this.fireClose();
  }

  protected tooLarge(detail: string): void {
    this.fail(`message exceeds the limit of ${this.maxBytes} bytes (maxMessageBytes): ${detail}; the connection is closed`);
  }

  private stop(): void {
    this.stopped = true;
    this.detach?.();
    this.detach = undefined;
    this.pending.clear();
  }
}
