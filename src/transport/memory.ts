import { McpError } from '../errors.js';
import type { Channel, ChannelInfo, JsonRpcMessage, MessageContext, RequestId } from './channel.js';
import { ChannelEvents } from './channel-events.js';

/**
 * One end of an in-memory channel pair. Messages are delivered on a microtask, in
 * order, as structured clones (so neither side can mutate what the other holds), which
 * is close enough to a real transport for unit tests of everything above it.
 */
export class MemoryChannel extends ChannelEvents implements Channel {
  peer!: MemoryChannel;
  readonly info: ChannelInfo = { transport: 'memory', stderrTail: () => [], singleRequest: false };
  /** Ids abandoned on this side, when it stands for per-request streams (for tests that check `abandon`). */
  readonly abandoned: RequestId[] = [];

  /** @param perRequestStreams Abandon like 2026 HTTP (the request's stream closes: nothing is sent), else like stdio. */
  constructor(private readonly perRequestStreams: boolean) {
    super();
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  override send(message: JsonRpcMessage, context: MessageContext = {}): Promise<void> {
    if (this.closeReason) return Promise.reject(this.closeReason);
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

  override abandon(id: RequestId, reason?: string): void {
    if (this.perRequestStreams) this.abandoned.push(id);
    else super.abandon(id, reason);
  }

  /** Test helper: what a transport reports as skipped noise. */
  emitNoise(text: string): void {
    this.noise.fire(text);
  }

  /** Ends this side with `reason` (a dead peer, a broken frame), and the other side with `peer-eof`. */
  fail(reason: McpError): void {
    this.fireClose(reason);
    this.peer.fireClose(new McpError('peer-eof', 'the peer closed the channel'));
  }

  close(): Promise<void> {
    this.fireClose(new McpError('closed', 'the connection was closed'));
    this.peer.fireClose(new McpError('peer-eof', 'the peer closed the channel'));
    return Promise.resolve();
  }
}

/**
 * Two connected in-memory channels: what one sends, the other receives.
 * `abandon: true`: `abandon(id)` on either end sends nothing and notes the id (like 2026
 * HTTP's per-request streams); else it sends `notifications/cancelled` (like stdio).
 */
export function createMemoryChannelPair(options: { abandon?: boolean } = {}): [MemoryChannel, MemoryChannel] {
  const a = new MemoryChannel(options.abandon ?? false);
  const b = new MemoryChannel(options.abandon ?? false);
  a.peer = b;
  b.peer = a;
  return [a, b];
}
