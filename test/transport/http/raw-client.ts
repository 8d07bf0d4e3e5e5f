import type { Channel, JsonRpcMessage, MessageContext, RequestId } from '../../../src/transport/channel.js';

/** Records what a channel delivers and pairs answers with requests: raw JSON-RPC, no client core. */
export class RawClient {
  readonly received: { message: JsonRpcMessage; context: MessageContext }[] = [];
  private readonly waiting = new Map<RequestId, (message: JsonRpcMessage) => void>();
  private nextId = 1;

  constructor(readonly channel: Channel) {
    channel.onMessage((message, context) => {
      this.received.push({ message, context });
      if (!('method' in message) && message.id !== null) this.waiting.get(message.id)?.(message);
    });
  }

  /** Sends a request and resolves with its answer (bounded by `ms`). */
  async request(method: string, params?: object, ms = 10000): Promise<{ id: RequestId; result?: any; error?: any }> {
    const id = this.nextId++;
    let timer: NodeJS.Timeout | undefined;
    const answer = new Promise<JsonRpcMessage>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to ${method} in ${ms} ms`)), ms);
      this.waiting.set(id, (message) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(message);
      });
    });
    try {
      await this.channel.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) } as JsonRpcMessage);
    } catch (error) {
      clearTimeout(timer);
      this.waiting.delete(id);
      answer.catch(() => {});
      throw error;
    }
    return { id, ...(await answer) } as never;
  }

  notify(method: string, params?: object): Promise<void> {
    return this.channel.send({ jsonrpc: '2.0', method, ...(params ? { params } : {}) } as JsonRpcMessage);
  }

  /** The legacy handshake: `initialize`, then `notifications/initialized`. */
  async initialize(version = '2025-11-25'): Promise<any> {
    const answer = await this.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    this.channel.setProtocolVersion(answer.result.protocolVersion);
    await this.notify('notifications/initialized');
    return answer.result;
  }
}

/** The closing reason of a channel, bounded. */
export function closeReason(channel: Channel, ms = 10000): Promise<import('../../../src/errors.js').McpError> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`channel did not close in ${ms} ms`)), ms);
    channel.onClose((reason) => {
      clearTimeout(timer);
      resolve(reason);
    });
  });
}
