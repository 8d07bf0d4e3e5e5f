import type { Writable } from 'node:stream';
import { AbstractMessageWriter } from 'vscode-jsonrpc';
import type { Message, MessageWriter } from 'vscode-jsonrpc';
import { McpError } from '../errors.js';

interface PendingWrite {
  frame: string;
  message: Message;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The stream-facing half of a writer, shared by both framings, which supply
 * {@link encode}. Each frame is one `write` call, so frames never interleave; while the
 * stream asks to wait for 'drain', frames queue in order instead of piling up in the
 * stream's own buffer. When the stream errors or closes, pending and later writes reject
 * and `onError` fires for each.
 */
export abstract class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private queue: (PendingWrite | undefined)[] = [];
  private head = 0;
  private congested = false;
  private ending = false;
  private failure: Error | undefined;
  private errorCount = 0;
  private readonly handleDrain = (): void => this.flush();
  /** 0: nothing written this turn; 1: one frame went straight out; 2: the stream is corked until the turn ends. */
  private burst = 0;
  private readonly endBurst = (): void => {
    if (this.burst === 2) this.writable.uncork();
    this.burst = 0;
  };
  private readonly handleError = (error: Error): void => this.failAll(error);
  private readonly handleClose = (): void => {
    this.failAll(new Error('cannot write a message: the stream is closed'));
    this.fireClose();
  };

  constructor(private readonly writable: Writable) {
    super();
    writable.on('drain', this.handleDrain).on('error', this.handleError).on('close', this.handleClose);
  }

  write(message: Message): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let frame: string;
      try {
        frame = this.encode(message);
      } catch (error) {
        // Only this message is bad (a BigInt, a cycle); the stream is fine, so this is no writer error.
        return reject(new McpError('protocol-error', `cannot send a message that is not JSON: ${(error as Error).message ?? error}`, { cause: error }));
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

  override dispose(): void {
    this.writable.off('drain', this.handleDrain).off('error', this.handleError).off('close', this.handleClose);
    this.failAll(new Error('cannot write a message: the writer was disposed'));
    super.dispose();
  }

  /** The whole frame of one message, written as is. */
  protected abstract encode(message: Message): string;

  private writeNow(write: PendingWrite): void {
    if (!this.writable.writable) {
      this.failAll(new Error('cannot write a message: the stream is closed or ended'));
      return this.reject(write, this.failure!);
    }
    // The first frame of a turn of the event loop goes out at once (no added latency); the
    // frames that follow it in the same turn (the calls that a chunk of answers just
    // released) are corked and leave together in one writev when the turn ends: one
    // syscall and one wake-up of the server instead of one per frame.
    if (this.burst === 0) {
      this.burst = 1;
      process.nextTick(this.endBurst);
    } else if (this.burst === 1) {
      this.burst = 2;
      this.writable.cork();
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
    this.fireError(error, write.message, ++this.errorCount);
    write.reject(error);
  }
}
