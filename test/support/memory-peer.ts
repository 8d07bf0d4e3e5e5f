import type { JsonRpcMessage, MessageContext } from '../../src/transport/channel.js';
import { createMemoryChannelPair, type MemoryChannel } from '../../src/transport/memory.js';

type Message = Record<string, any>;

/**
 * The far end of an in-memory channel, played by a test: records what arrives (with its
 * context) and lets the test answer, notify or ask. Waits are bounded.
 */
export class MemoryPeer {
  readonly received: { message: Message; context: MessageContext }[] = [];
  private waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  /** Answers requests by method as they arrive; a handler's return is the result, a throw becomes an error. */
  readonly handlers = new Map<string, (params: any, message: Message) => unknown>();

  constructor(readonly channel: MemoryChannel) {
    channel.onMessage((message, context) => {
      const m = message as unknown as Message;
      this.received.push({ message: m, context });
      for (const waiter of [...this.waiters]) {
        if (waiter.match(m)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(m);
        }
      }
      const handler = typeof m.method === 'string' && m.id !== undefined ? this.handlers.get(m.method) : undefined;
      if (handler) void this.answerWith(m, handler);
    });
  }

  private async answerWith(m: Message, handler: (params: any, message: Message) => unknown): Promise<void> {
    try {
      const result = await handler(m.params, m);
      if (result === NO_ANSWER) return;
      this.reply(m.id, result);
    } catch (error) {
      const e = error as { code?: number; message: string; data?: unknown };
      this.fail(m.id, e.code ?? -32603, e.message, e.data);
    }
  }

  /** Messages received so far with this method. */
  sent(method: string): Message[] {
    return this.received.map((r) => r.message).filter((m) => m.method === method);
  }

  /** The first message (already received or still to come) that `match` accepts; rejects after `ms`. */
  next(match: string | ((m: Message) => boolean), ms = 5000): Promise<Message> {
    const accept = typeof match === 'string' ? (m: Message) => m.method === match : match;
    const already = this.received.find((r) => accept(r.message));
    if (already) return Promise.resolve(already.message);
    return new Promise((resolve, reject) => {
      const waiter = { match: accept, resolve: (m: Message) => (clearTimeout(timer), resolve(m)) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no matching message within ${ms} ms; got ${JSON.stringify(this.received.map((r) => r.message.method ?? r.message.id))}`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  reply(id: unknown, result: unknown, context?: MessageContext): void {
    void this.channel.send({ jsonrpc: '2.0', id, result } as JsonRpcMessage, context);
  }

  fail(id: unknown, code: number, message: string, data?: unknown): void {
    void this.channel.send({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } } as JsonRpcMessage);
  }

  notify(method: string, params?: unknown, context?: MessageContext): void {
    void this.channel.send({ jsonrpc: '2.0', method, params } as JsonRpcMessage, context);
  }

  request(id: string | number, method: string, params?: unknown, context?: MessageContext): void {
    void this.channel.send({ jsonrpc: '2.0', id, method, params } as JsonRpcMessage, context);
  }
}

/** Returned by a {@link MemoryPeer} handler: send nothing (a server that ignores the request). */
export const NO_ANSWER = Symbol('no answer');

/** An in-memory pair: the near end for the code under test, and a peer the test plays. */
export function memoryPair(options: { abandon?: boolean } = {}): { near: MemoryChannel; peer: MemoryPeer } {
  const [near, far] = createMemoryChannelPair(options);
  return { near, peer: new MemoryPeer(far) };
}
