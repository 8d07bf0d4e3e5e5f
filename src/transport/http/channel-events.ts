import type { McpError } from '../../errors.js';
import type { Disposable, JsonRpcMessage, MessageContext } from '../channel.js';

type Listener<A extends unknown[]> = (...args: A) => void;

/** The listener sets of a channel, and its one close event. */
export class ChannelEvents {
  private readonly messages = new Set<Listener<[JsonRpcMessage, MessageContext]>>();
  private readonly noise = new Set<Listener<[string]>>();
  private readonly closes = new Set<Listener<[McpError]>>();
  private closedWith: McpError | undefined;

  get closeReason(): McpError | undefined {
    return this.closedWith;
  }

  onMessage(listener: Listener<[JsonRpcMessage, MessageContext]>): Disposable {
    return add(this.messages, listener);
  }

  onNoise(listener: Listener<[string]>): Disposable {
    return add(this.noise, listener);
  }

  onClose(listener: Listener<[McpError]>): Disposable {
    return add(this.closes, listener);
  }

  message(message: JsonRpcMessage, context: MessageContext): void {
    if (this.closedWith) return;
    for (const listener of [...this.messages]) listener(message, context);
  }

  skipped(text: string): void {
    for (const listener of [...this.noise]) listener(text);
  }

  /** Fires the close listeners once; later calls do nothing. Returns whether this call closed it. */
  close(reason: McpError): boolean {
    if (this.closedWith) return false;
    this.closedWith = reason;
    for (const listener of [...this.closes]) listener(reason);
    this.messages.clear();
    this.noise.clear();
    this.closes.clear();
    return true;
  }
}

function add<T>(set: Set<T>, listener: T): Disposable {
  set.add(listener);
  return { dispose: () => void set.delete(listener) };
}

/** Parses one body or SSE event: a JSON-RPC message (or a batch of them), or undefined for noise. */
export function parseMessages(text: string): JsonRpcMessage[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = Array.isArray(value) ? value : [value];
  return list.every(isJsonRpc) ? (list as JsonRpcMessage[]) : undefined;
}

function isJsonRpc(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}
