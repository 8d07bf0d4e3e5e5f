import type { ServerResponse } from 'node:http';
import { McpError } from '../../errors.js';
import type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext, RequestId } from '../channel.js';
import { ChannelEvents } from '../channel-events.js';
import { Listeners } from '../../util/listeners.js';

/** The response a client's POSTed request is answered on: an SSE stream, or one JSON body. */
interface ResponseStream {
  res: ServerResponse;
  sse: boolean;
  started: boolean;
  /** Removes the stream's close listener. */
  detach(): void;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

/**
 * The server end of Streamable HTTP for one gateway connection: a legacy session (many
 * POSTs and a GET stream under one `Mcp-Session-Id`) or one stateless 2026 request. Each
 * request a client POSTs is answered on that POST's response: its progress and other
 * related messages as SSE events, then the answer, which ends it. Messages related to no
 * open request go on the session's GET stream, if the client opened one.
 */
export class HttpServerChannel extends ChannelEvents implements Channel {
  readonly info: ChannelInfo;
  private readonly streams = new Map<RequestId, ResponseStream>();
  /** Our requests to the client, by id, that belong on the stream of one of its requests (see {@link relate}). */
  private readonly relations = new Map<RequestId, RequestId>();
  private standalone: ServerResponse | undefined;
  private readonly answeredListeners = new Listeners<[]>();

  /**
   * @param cancelOnDisconnect 2026 era: a client closing a request's stream cancels it. In
   *   the legacy era a dropped connection is not a cancellation (the client sends one).
   */
  constructor(
    url: string,
    readonly sessionId: string | undefined,
    private readonly cancelOnDisconnect: boolean,
  ) {
    super();
    this.info = { transport: 'http', url, ...(sessionId === undefined ? {} : { sessionId }), stderrTail: () => [] };
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  /** Requests still waiting for their answer. */
  get openRequests(): number {
    return this.streams.size;
  }

  /** Whether a request is in flight or the client holds the GET stream open. */
  get busy(): boolean {
    return this.streams.size > 0 || this.standalone !== undefined;
  }

  /** Hands one POSTed message to the gateway; a request is answered on `res`, anything else gets 202 at once. */
  accept(message: JsonRpcMessage, res: ServerResponse, sse: boolean): void {
    if (this.closeReason) return void res.writeHead(404).end();
    const m = message as { id?: RequestId | null; method?: unknown };
    const isRequest = typeof m.method === 'string' && m.id !== undefined && m.id !== null;
    if (!isRequest) {
      res.writeHead(202).end();
    } else {
      const id = m.id as RequestId;
      if (this.streams.has(id)) {
        res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message: `request id ${JSON.stringify(id)} is already in flight` } }));
        return;
      }
      const onClose = () => {
        if (this.streams.get(id)?.res !== res) return;
        this.streams.delete(id);
        // The client gave up on the request before its answer.
        if (this.cancelOnDisconnect && this.isOpen) this.messages.fire({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client closed the request stream' } } as JsonRpcMessage, {});
        this.answeredListeners.fire();
      };
      res.once('close', onClose);
      this.streams.set(id, { res, sse, started: false, detach: () => res.off('close', onClose) });
    }
    this.messages.fire(message, {});
  }

  /** The legacy session's GET stream for messages related to no request; a second one replaces the first. */
  attachStandalone(res: ServerResponse): void {
    if (this.closeReason) return void res.writeHead(404).end();
    this.standalone?.end();
    this.standalone = res;
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    res.once('close', () => {
      if (this.standalone === res) this.standalone = undefined;
    });
  }

  /**
   * Our request `id` (about to be sent) is about the client's request `to`: it goes on that
   * request's SSE stream, where a client of the 2025-11-25 revision expects it.
   */
  relate(id: RequestId, to: RequestId): void {
    if (this.streams.has(to)) this.relations.set(id, to);
  }

  async send(message: JsonRpcMessage, context: MessageContext = {}): Promise<void> {
    if (this.closeReason) throw this.closeReason;
    const m = message as { id?: RequestId; method?: unknown };
    if (m.method !== undefined && m.id !== undefined && context.relatedTo === undefined) {
      const to = this.relations.get(m.id);
      if (to !== undefined) {
        this.relations.delete(m.id);
        context = { ...context, relatedTo: to };
      }
    }
    const isAnswer = m.method === undefined && m.id !== undefined;
    if (isAnswer) {
      const stream = this.streams.get(m.id!);
      if (!stream) return; // the client went away first
      this.streams.delete(m.id!);
      stream.detach();
      if (stream.sse) {
        this.write(stream, message);
        stream.res.end();
      } else {
        stream.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
      }
      this.answeredListeners.fire();
      return;
    }
    const related = context.relatedTo === undefined ? undefined : this.streams.get(context.relatedTo);
    if (related?.sse) return this.write(related, message);
    // A JSON answer has no room for messages before it; those go where unrelated ones go.
    if (this.standalone) return void this.standalone.write(sseEvent(message));
    // A notification nobody can receive is dropped; a request would wait for an answer that cannot come.
    if (m.method !== undefined && m.id !== undefined) {
      throw new McpError('protocol-error', `the client has no stream open to receive ${String(m.method)} (its POST did not accept text/event-stream and it holds no GET stream)`);
    }
  }

  /** Fires whenever a request has been answered or abandoned (a stateless channel closes when none is left). */
  onAnswered(listener: () => void): Disposable {
    return this.answeredListeners.add(listener);
  }

  /** Ends the connection: open request streams and the GET stream are ended. Idempotent. */
  close(): Promise<void> {
    if (!this.fireClose(new McpError('closed', 'the gateway closed the connection'))) return Promise.resolve();
    for (const stream of this.streams.values()) {
      stream.detach();
      if (!stream.res.headersSent) stream.res.writeHead(503, { 'content-type': 'application/json' });
      stream.res.end();
    }
    this.streams.clear();
    this.relations.clear();
    this.standalone?.end();
    this.standalone = undefined;
    this.answeredListeners.clear();
    return Promise.resolve();
  }

  private write(stream: ResponseStream, message: JsonRpcMessage): void {
    if (!stream.started) {
      stream.started = true;
      stream.res.writeHead(200, SSE_HEADERS);
    }
    stream.res.write(sseEvent(message));
  }
}

function sseEvent(message: JsonRpcMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}
