import { McpError } from '../errors.js';
import type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext } from './channel.js';
import { Listeners } from './listeners.js';

/**
 * One end of an in-memory channel pair. Messages are delivered on a microtask, in
 * order, as structured clones (so neither side can mutate what the other holds), which
 * is close enough to a real transport for unit tests of everything above it.
 */
export class MemoryChannel implements Channel {
  peer!: MemoryChannel;
  readonly info: ChannelInfo = { transport: 'memory', stderrTail: () => [] };
  private readonly messages = new Listeners<[JsonRpcMessage, MessageContext]>();
  private readonly noiseListeners = new Listeners<[string]>();
  private readonly closeListeners = new Listeners<[McpError]>();
  private reason: McpError | undefined;
  /** Ids the other side abandoned (for tests that check `abandon`). */
  readonly abandoned: (number | string)[] = [];

  constructor(private readonly withAbandon: boolean) {
    if (!withAbandon) (this as { abandon?: unknown }).abandon = undefined;
  }

  get isOpen(): boolean {
    return this.reason === undefined;
  }

  send(message: JsonRpcMessage, context: MessageContext = {}): Promise<void> {
    if (this.reason) return Promise.reject(this.reason);
    let copy: JsonRpcMessage;
    try {
      copy = structuredClone(message);
    } catch (error) {
      return Promise.reject(new McpError('protocol-error', `cannot send a message that is not JSON: ${(error as Error).message}`, { cause: error }));
    }
    const peer = this.peer;
    queueMicrotask(() => {
      if (peer.isOpen) peer.messages.fire(copy, { ...context });
    });
    return Promise.resolve();
  }

  onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.messages.add(listener);
  }

  onNoise(listener: (text: string) => void): Disposable {
    return this.noiseListeners.add(listener);
  }

  onClose(listener: (reason: McpError) => void): Disposable {
    return this.closeListeners.add(listener);
  }

  abandon(id: number | string): void {
    if (this.withAbandon) this.abandoned.push(id);
  }

  /** Test helper: what a transport reports as skipped noise. */
  emitNoise(text: string): void {
    this.noiseListeners.fire(text);
  }

  /** Ends this side with `reason` (a dead peer, a broken frame), and the other side with `peer-eof`. */
  fail(reason: McpError): void {
    this.end(reason);
    this.peer.end(new McpError('peer-eof', 'the peer closed the channel'));
  }

  close(): Promise<void> {
    this.end(new McpError('closed', 'the connection was closed'));
    this.peer.end(new McpError('peer-eof', 'the peer closed the channel'));
    return Promise.resolve();
  }

  private end(reason: McpError): void {
    if (this.reason) return;
    this.reason = reason;
    this.closeListeners.fire(reason);
    this.messages.clear();
    this.closeListeners.clear();
  }
}

/**
 * Two connected in-memory channels: what one sends, the other receives.
 * `abandon: true` gives both ends an `abandon(id)` (like 2026 HTTP's per-request streams).
 */
export function createMemoryChannelPair(options: { abandon?: boolean } = {}): [MemoryChannel, MemoryChannel] {
  const a = new MemoryChannel(options.abandon ?? false);
  const b = new MemoryChannel(options.abandon ?? false);
  a.peer = b;
  b.peer = a;
  return [a, b];
}
