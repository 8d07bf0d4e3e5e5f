import type { Writable } from 'node:stream';
import { AbstractMessageWriter } from './jsonrpc-base.js';
import type { Message, MessageWriter } from 'vscode-jsonrpc';
import { McpError, serverLabel } from '../../errors.js';
import { invalidOption } from './framing-options.js';

/**
 * Most frames that leave in one write. A burst (the calls that one chunk of answers
 * released) goes out in a few writes rather than one, so the server starts on the first
 * requests while the host still encodes the rest: one write for the whole burst makes
 * host and server take turns, which measured slower than one write per frame.
 */
const BATCH_FRAMES = 16;
/** Frames of at least this many characters are written alone, never copied into a batch. */
const BATCH_CHARS = 16 * 1024;

/** 16 MiB. */
export const DEFAULT_MAX_QUEUED_BYTES = 16 * 1024 * 1024;

export interface WriterOptions {
  /**
   * Most bytes of frames the writer holds while the stream does not take them (a server
   * that stops reading its stdin). A write past it is refused at once with `unavailable`,
   * and the writer goes on: frames already queued still leave once the peer reads again.
   * Default: {@link DEFAULT_MAX_QUEUED_BYTES} (16 MiB).
   */
  maxQueuedBytes?: number;
  /** The server at the other end, named in errors. */
  server?: string;
  /**
   * What a write that failed with the stream (not one the writer refused) reports to its
   * caller, made from the stream's error. Default: that error.
   */
  streamFailure?: (error: Error) => Error;
}

type RequestId = number | string;

const nothing = (): void => {};

/** `maxQueuedBytes` with its default filled in; `invalid-config` when it is not a positive integer. */
export function resolveMaxQueuedBytes(options: WriterOptions | undefined): number {
  const value = options?.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  if (!Number.isSafeInteger(value) || value <= 0) throw invalidOption('maxQueuedBytes', 'a positive integer', value);
  return value;
}

interface PendingWrite {
  /** '' once dropped. */
  frame: string;
  /** Bytes of `frame`, counted when it was queued (0 for a frame written at once). */
  bytes: number;
  /** The request's id, for a request (only a request's frame can be dropped). */
  id: RequestId | undefined;
  /** Undefined once dropped, so a dropped frame holds nothing. */
  message: Message | undefined;
  resolve(): void;
  reject(error: Error, message: Message): void;
}

/**
 * The stream-facing half of a writer, shared by both framings, which supply
 * {@link encode}. Frames never interleave and keep their order. The frames of one turn
 * of the event loop leave joined, a few writes of up to {@link BATCH_FRAMES} frames each;
 * while the stream asks to wait for 'drain', frames queue here instead of piling up in
 * the stream's own buffer, at most `maxQueuedBytes` of them, and a request's queued frame
 * can be dropped ({@link drop}) once nobody waits for its answer. When the stream errors
 * or closes, pending and later writes reject and `onError` fires for each.
 */
export abstract class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private queue: (PendingWrite | undefined)[] = [];
  private head = 0;
  /** The queued frames of requests, by id. */
  private readonly queuedRequests = new Map<RequestId, PendingWrite>();
  private bytesQueued = 0;
  /** Dropped frames still taking a slot in `queue`. */
  private holes = 0;
  private readonly maxQueuedBytes: number;
  private readonly server: string | undefined;
  private readonly streamFailure: ((error: Error) => Error) | undefined;
  private congested = false;
  /**
   * A write was refused for want of room, and none has been freed since: later writes are
   * refused before they are encoded (50k refused 8 KiB requests must not each be serialized).
   */
  private full = false;
  private ending = false;
  private failure: Error | undefined;
  private errorCount = 0;
  private readonly handleDrain = (): void => this.flush();
  /** Frames gathered for one write: see {@link writeNow}. */
  private batch: PendingWrite[] = [];
  private batchChars = 0;
  private batchScheduled = false;
  private readonly endTurn = (): void => {
    this.batchScheduled = false;
    this.writeBatch();
  };
  private readonly handleError = (error: Error): void => this.failAll(error);
  private readonly handleClose = (): void => {
    this.failAll(new Error('cannot write a message: the stream is closed'));
    this.fireClose();
  };

  constructor(
    private readonly writable: Writable,
    options: WriterOptions = {},
  ) {
    super();
    this.maxQueuedBytes = resolveMaxQueuedBytes(options);
    this.server = options.server;
    this.streamFailure = options.streamFailure;
    writable.on('drain', this.handleDrain).on('error', this.handleError).on('close', this.handleClose);
  }

  /** Bytes of frames waiting for the stream, in this writer and in the stream's own buffer. */
  get queuedBytes(): number {
    return this.bytesQueued + this.batchChars + this.writable.writableLength;
  }

  /**
   * Resolves once the frame is handed to the stream (or dropped); rejects with
   * `protocol-error` for a message that is not JSON, with `unavailable` when `maxQueuedBytes`
   * are already waiting — neither ends the writer — and with the stream's error once it fails.
   */
  write(message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => this.post(message, reject, resolve));
  }

  /** {@link write} with callbacks instead of a promise: `failed` gets what `write` would reject with, and the message. */
  post(message: Message, failed: (error: Error, message: Message) => void, done: () => void = nothing): void {
    if (this.full && this.failure === undefined && !this.ending) return failed(this.refusal(this.queuedBytes), message);
    let frame: string;
    try {
      frame = this.encode(message);
    } catch (error) {
      // Only this message is bad (a BigInt, a cycle); the stream is fine, so this is no writer error.
      return failed(
        new McpError('protocol-error', `${serverLabel(this.server)}cannot send a message that is not JSON: ${(error as Error).message ?? error}`, {
          ...this.fields(),
          cause: error,
        }),
        message,
      );
    }
    const id = 'method' in message && 'id' in message ? (message.id as RequestId | undefined) : undefined;
    const write: PendingWrite = { frame, bytes: 0, id, message, resolve: done, reject: failed };
    if (this.failure !== undefined) this.reject(write, this.failure);
    else if (this.ending) this.reject(write, new Error('cannot write a message: the writer was ended'));
    else if (this.congested) this.enqueue(write);
    else this.writeNow(write);
  }

  /**
   * Takes the queued frame of request `id` out of the queue, unwritten, because nobody
   * waits for its answer any more (it timed out, was cancelled, its connection is being
   * left). Returns whether it was still queued: then the peer never saw the request and
   * needs no `notifications/cancelled`. Its `write()` promise resolves.
   */
  drop(id: RequestId): boolean {
    const write = this.queuedRequests.get(id);
    if (!write) return false;
    this.queuedRequests.delete(id);
    this.bytesQueued -= write.bytes;
    write.frame = '';
    write.bytes = 0;
    write.message = undefined;
    write.resolve();
    this.full = false;
    if (++this.holes > 1024 && this.holes * 2 > this.queue.length - this.head) this.compact();
    return true;
  }

  /** Ends the stream once the queued frames are written. */
  end(): void {
    if (this.ending) return;
    this.ending = true;
    if (!this.congested) this.endNow();
  }

  override dispose(): void {
    this.writable.off('drain', this.handleDrain).off('error', this.handleError).off('close', this.handleClose);
    this.failAll(new Error('cannot write a message: the writer was disposed'));
    super.dispose();
  }

  /** The whole frame of one message, written as is. */
  protected abstract encode(message: Message): string;

  private enqueue(write: PendingWrite): void {
    const bytes = Buffer.byteLength(write.frame, 'utf8');
    const waiting = this.queuedBytes;
    if (waiting + bytes > this.maxQueuedBytes) {
      // Refused alone, not reported through onError: the connection stays up for when the peer reads again.
      this.full = true;
      return write.reject(this.refusal(waiting), write.message as Message);
    }
    write.bytes = bytes;
    this.bytesQueued += bytes;
    this.queue.push(write);
    if (write.id !== undefined) this.queuedRequests.set(write.id, write);
  }

  private writeNow(write: PendingWrite): void {
    if (!this.writable.writable) {
      this.failAll(new Error('cannot write a message: the stream is closed or ended'));
      return this.reject(write, this.failure!);
    }
    // Frames of one turn of the event loop leave together as one string in one write, at most
    // BATCH_FRAMES at a time: one syscall, one UTF-8 conversion and one wake-up of the server
    // for many frames. The rest leave when the turn ends (process.nextTick runs before any
    // I/O, so no latency is added).
    if (write.frame.length >= BATCH_CHARS) {
      this.writeBatch();
      return this.writeFrames([write], write.frame);
    }
    this.batch.push(write);
    this.batchChars += write.frame.length;
    if (this.batch.length >= BATCH_FRAMES || this.batchChars >= BATCH_CHARS) this.writeBatch();
    else if (!this.batchScheduled) {
      this.batchScheduled = true;
      process.nextTick(this.endTurn);
    }
  }

  private writeBatch(): void {
    const writes = this.batch;
    if (writes.length === 0) return;
    this.batch = [];
    this.batchChars = 0;
    let data = writes[0]!.frame;
    for (let i = 1; i < writes.length; i++) data += writes[i]!.frame;
    this.writeFrames(writes, data);
  }

  /** `data` is the frames of `writes`, joined. */
  private writeFrames(writes: PendingWrite[], data: string): void {
    const accepted = this.writable.write(data, (error) => {
      if (!error) {
        for (const write of writes) write.resolve();
        return;
      }
      this.failure ??= error;
      for (const write of writes) this.reject(write, error);
      this.failAll(error);
    });
    if (!accepted) this.congested = true;
  }

  private flush(): void {
    this.congested = false;
    this.full = false;
    while (!this.congested && this.head < this.queue.length) {
      const write = this.queue[this.head]!;
      this.queue[this.head++] = undefined;
      if (write.message === undefined) {
        this.holes--;
        continue;
      }
      this.take(write);
      this.writeNow(write);
    }
    if (this.head < this.queue.length) return;
    this.queue = [];
    this.head = 0;
    this.holes = 0;
    if (this.ending) this.endNow();
  }

  /** A queued frame leaves the queue: it can no longer be dropped. */
  private take(write: PendingWrite): void {
    this.bytesQueued -= write.bytes;
    write.bytes = 0;
    if (write.id !== undefined && this.queuedRequests.get(write.id) === write) this.queuedRequests.delete(write.id);
  }

  /** Forgets the slots of dropped frames, so a peer that never reads cannot make them pile up. */
  private compact(): void {
    const live: PendingWrite[] = [];
    for (let i = this.head; i < this.queue.length; i++) {
      const write = this.queue[i];
      if (write?.message !== undefined) live.push(write);
    }
    this.queue = live;
    this.head = 0;
    this.holes = 0;
  }

  private endNow(): void {
    this.writeBatch();
    if (!this.writable.writableEnded && !this.writable.destroyed) this.writable.end();
  }

  /** From now on every write fails with `error` (the first one wins), starting with the queued ones. */
  private failAll(error: Error): void {
    this.failure ??= error;
    const queued = this.queue;
    const head = this.head;
    this.queue = [];
    this.head = 0;
    this.holes = 0;
    this.bytesQueued = 0;
    this.queuedRequests.clear();
    const batch = this.batch;
    this.batch = [];
    this.batchChars = 0;
    for (const write of batch) this.reject(write, this.failure);
    for (let i = head; i < queued.length; i++) {
      const write = queued[i]!;
      if (write.message !== undefined) this.reject(write, this.failure);
    }
  }

  /** Why a write is refused while `waiting` bytes wait for a peer that does not read. */
  private refusal(waiting: number): McpError {
    return new McpError(
      'unavailable',
      `${serverLabel(this.server)}the server is not reading its input: ${waiting} bytes of messages are already waiting (maxQueuedBytes ${this.maxQueuedBytes}); not sending more until it does`,
      this.fields(),
    );
  }

  private reject(write: PendingWrite, error: Error): void {
    this.fireError(error, write.message, ++this.errorCount);
    write.reject(error instanceof McpError || !this.streamFailure ? error : this.streamFailure(error), write.message as Message);
  }

  private fields(): { server?: string } {
    return this.server === undefined ? {} : { server: this.server };
  }
}
