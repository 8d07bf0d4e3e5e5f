import { McpError } from '../../errors.js';
import type { RequestScope } from '../../protocol/client-options.js';
import type { Channel, JsonRpcMessage } from '../../transport/channel.js';
import { toWire } from './wire.js';

/** One tool call relayed as it came: where the server's answer and progress go. */
export interface RelayedCall {
  /** Who made it, for a question of the server's that no request claims (see `ConnectOptions.waiting`). */
  readonly scope: RequestScope;
  /** The server's answer, as it sent it: `result`, or its JSON-RPC `error`. */
  settle(answer: { result?: unknown; error?: unknown }): void;
  /** A `notifications/progress` of the server's about the call (its params, token and all). */
  progress(params: Record<string, unknown>): void;
}

/**
 * The daemon's short path for tool calls to a running legacy-era stdio server: a call
 * goes to the server as a frame of its own, with an id of the relay's (negative, so that
 * it never meets the ids of the server's client, which count up from 1), and the answer
 * comes back by that id, with no request engine, time-out timer or abort signal on the
 * daemon's side: the client keeps its own. Everything else of the session (the handshake,
 * listings, questions, subscriptions) goes through the server's `McpClient` as before, on
 * the same channel, which sees the relay's answers and ignores them (an id it never sent).
 */
export class CallRelay {
  private readonly calls = new Map<number, RelayedCall>();
  private lastId = 0;

  constructor(private readonly channel: Channel) {
    channel.onMessage((message) => this.receive(message as unknown as Record<string, unknown>));
    // The sessions end with the server (the shared server ends them): nobody waits any more.
    channel.onClose(() => this.calls.clear());
  }

  get isOpen(): boolean {
    return this.channel.isOpen;
  }

  /** The callers of the calls in flight: a legacy server's question is about one of them. */
  *scopes(): Iterable<RequestScope> {
    for (const call of this.calls.values()) yield call.scope;
  }

  /**
   * Sends a `tools/call` with `name` and `args` (and a progress token, the call's id, as the
   * server's client would); returns the id, which {@link cancel} takes.
   */
  send(name: string, args: unknown, call: RelayedCall): number {
    const id = --this.lastId;
    this.calls.set(id, call);
    const message = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: id } } } as JsonRpcMessage;
    this.channel.post(message, this.undelivered);
    return id;
  }

  /** Nobody waits for call `id` any more: the server is told (once), its answer will be dropped. */
  cancel(id: number, reason: string): void {
    if (this.calls.delete(id)) this.channel.abandon(id, reason);
  }

  private receive(m: Record<string, unknown>): void {
    const id = m.id;
    if (typeof id === 'number' && id < 0 && m.method === undefined) {
      const call = this.calls.get(id);
      if (!call) return;
      this.calls.delete(id);
      call.settle(m);
      return;
    }
    if (m.method !== 'notifications/progress') return;
    const params = m.params as Record<string, unknown> | undefined;
    const token = params?.progressToken;
    if (typeof token === 'number' && token < 0) this.calls.get(token)?.progress(params!);
  }

  /**
   * A call's frame could not be written while the channel stays open (the server has
   * stopped reading: the writer's queue is full): it fails alone, as the server's client
   * fails it. A channel that died ends the sessions instead.
   */
  private readonly undelivered = (error: unknown, message: JsonRpcMessage): void => {
    const id = (message as { id?: number }).id!;
    const call = this.calls.get(id);
    if (!call || !this.channel.isOpen) return;
    this.calls.delete(id);
    const wire = toWire(error instanceof McpError ? error : new McpError('protocol-error', String((error as Error)?.message ?? error), {}));
    call.settle({ error: { code: -32603, message: wire.message, data: { 'lazy-mcp/error': wire } } });
  };
}
