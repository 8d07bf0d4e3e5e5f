import { McpError, serverLabel } from '../../errors.js';
import type { Channel, ChannelInfo, JsonRpcMessage, MessageContext, RequestId } from '../channel.js';
import { ChannelEvents } from '../channel-events.js';
import type { AuthProvider } from './auth-provider.js';
import { parseMessages } from './parse-messages.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../framing/framing-options.js';
import { ConnectionPool } from './connection-pool.js';
import { exchange, ExchangeAborted, exchangeConfig, type ExchangeConfig, isAuthFailure } from './http-exchange.js';
import { httpFailure } from './fetch-failure.js';
import { discardBody, readBounded } from './read-body.js';
import { type HeaderParam, paramHeaders } from './param-headers.js';
import { claimedRevision, isModernRevision, routingHeaders } from './request-headers.js';
import { DEFAULT_RETRY, IDEMPOTENT_METHODS, type RetryOptions } from './retry-policy.js';
import { deleteSession, sessionExpired } from './session.js';
import { followStream, type StreamHost } from './stream-follower.js';

/** Options of {@link StreamableHttpChannel}. */
export interface StreamableHttpOptions {
  /** The MCP endpoint (http or https). */
  url: string | URL;
  /** The server's name, for error messages. */
  name?: string;
  /** Sent on every request (the config's `headers`). */
  headers?: Record<string, string>;
  /** Largest JSON body or SSE event accepted, in bytes. Default 64 MiB. */
  maxMessageBytes?: number;
  /** OAuth: the `Authorization` header and what to do on 401 / 403 `insufficient_scope`. */
  auth?: AuthProvider;
  /** Aborting it closes the channel. */
  signal?: AbortSignal;
  /** Bounded retries of idempotent requests (see `IDEMPOTENT_METHODS`). Default 2 extra attempts from 100 ms. */
  retry?: Partial<RetryOptions>;
  /** Resumptions of a dropped SSE stream in a row. Default 3. */
  maxReconnects?: number;
  /** Delay before resuming when the server gave no SSE `retry`, in ms. Default 1000. */
  reconnectDelayMs?: number;
  /** The bound on the `DELETE` of a legacy session at close, in ms. Default 1000 (and never above `close(graceMs)`). */
  deleteTimeoutMs?: number;
  /**
   * Replaces the platform's `fetch` (undici), e.g. to give it a dispatcher. Default: the
   * platform's over connections of the channel's own, closed with it.
   */
  fetch?: typeof fetch;
}


/**
 * A {@link Channel} over Streamable HTTP, in both eras. Each client message is one POST
 * answered with JSON, an SSE stream or 202. Legacy era (`initialize`): the session id is
 * kept and sent, a GET stream carries the server's own messages, a dropped stream is
 * resumed with `Last-Event-ID`, and the session is deleted at close. 2026 era: no session,
 * routing headers on each request, and `abandon(id)` closes that request's stream.
 */
export class StreamableHttpChannel extends ChannelEvents implements Channel, StreamHost {
  readonly maxMessageBytes: number;
  private readonly config: ExchangeConfig;
  private readonly streams = new Map<RequestId, AbortController>();
  /**
   * Every POST in flight (and the stream it opened), aborted when the channel ends. Not
   * AbortSignal.any with the lifetime signal: on Node 20 that leaves a dependant entry
   * on the long-lived signal for every request (~55 B each, for the channel's life).
   */
  private readonly posts = new Set<AbortController>();
  /** Aborts the GET stream when the channel ends. */
  private readonly lifetime = new AbortController();
  private readonly options: StreamableHttpOptions;
  private protocolVersion: string | undefined;
  private sessionId: string | undefined;
  private getStreamStarted = false;
  /** The `x-mcp-header` parameters of each listed tool (see `setToolHeaders`). */
  private toolHeaders: ReadonlyMap<string, readonly HeaderParam[]> = new Map();
  private closing: Promise<void> | undefined;
  private readonly onSignal = () => void this.close();
  /** The channel's own connections, unless the options bring a `fetch`. */
  private readonly pool: ConnectionPool | undefined;
  readonly info: ChannelInfo;

  constructor(options: StreamableHttpOptions) {
    super();
    this.pool = options.fetch ? undefined : new ConnectionPool();
    this.config = exchangeConfig({ ...options, fetch: options.fetch ?? this.pool!.fetch }, { ...DEFAULT_RETRY, ...options.retry });
    this.options = options;
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const self = this;
    this.info = {
      transport: 'http',
      url: this.config.shown,
      get sessionId() {
        return self.sessionId;
      },
      stderrTail: () => [],
    };
    if (options.signal?.aborted) void this.close();
    else options.signal?.addEventListener('abort', this.onSignal, { once: true });
  }

  get isOpen(): boolean {
    return this.closing === undefined && this.closeReason === undefined;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  setToolHeaders(tools: ReadonlyMap<string, readonly HeaderParam[]>): void {
    this.toolHeaders = tools;
  }

  /**
   * 2026: closing the request's stream is its cancellation. Legacy era: a closed stream is
   * not one (the server keeps running the request), so the server is told with
   * `notifications/cancelled`, and the stream is closed once that is on its way: a server
   * that honours the cancellation never answers, and would hold the stream open for the
   * session's life.
   */
  abandon(id: RequestId, reason?: string): void {
    const controller = this.streams.get(id);
    this.streams.delete(id);
    if (isModernRevision(this.protocolVersion) || !this.isOpen) return void controller?.abort();
    const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, ...(reason === undefined ? {} : { reason }) } } as JsonRpcMessage;
    void this.send(cancelled).then(
      () => controller?.abort(),
      () => controller?.abort(),
    );
  }

  async send(message: JsonRpcMessage, _context?: MessageContext): Promise<void> {
    if (!this.isOpen) throw this.closedError();
    const isRequest = 'method' in message && 'id' in message && message.id !== undefined && message.id !== null;
    const requestId = isRequest ? (message as { id: RequestId }).id : undefined;
    const method = 'method' in message ? message.method : 'response';
    const version = claimedRevision(message) ?? this.protocolVersion;
    const modern = isModernRevision(version);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (version !== undefined) headers['mcp-protocol-version'] = version;
    if (modern) Object.assign(headers, routingHeaders(message), method === 'tools/call' ? this.paramHeadersOf(message) : {});
    else if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    const controller = new AbortController();
    const signal = controller.signal;
    this.posts.add(controller);
    if (requestId !== undefined) this.streams.set(requestId, controller);
    let streaming = false;
    try {
      let response: Response;
      try {
        response = await exchange(this.config, {
          method: 'POST',
          headers,
          body: JSON.stringify(message),
          signal,
          idempotent: IDEMPOTENT_METHODS.has(method),
          label: method,
        });
      } catch (error) {
        if (error instanceof ExchangeAborted) return;
        if (error instanceof McpError && error.code === 'connect-failed' && !isAuthFailure(error)) this.fail(error);
        throw error;
      }
      const session = response.headers.get('mcp-session-id');
      if (session && !modern && response.ok) this.sessionId = session;
      if (response.status === 202 || response.status === 204) {
        await discardBody(response);
        if (method === 'notifications/initialized') this.startGetStream();
        return;
      }
      if (response.status === 404 && this.sessionId !== undefined && !modern) {
        await discardBody(response);
        const error = sessionExpired(this.config.server, this.sessionId);
        this.fail(error);
        throw error;
      }
      const type = response.headers.get('content-type') ?? '';
      if (response.ok && type.includes('text/event-stream') && requestId !== undefined) {
        streaming = true;
        void this.follow(response, requestId, controller);
        return;
      }
      const body = await readBounded(response, this.maxMessageBytes);
      if (!body.ok) {
        const error = this.oversizedError(body.bytes);
        this.fail(error);
        throw error;
      }
      const messages = body.text.trim() === '' ? [] : parseMessages(body.text);
      // An error status with a JSON-RPC answer (a wrong revision, a header mismatch) is the server's answer.
      const answers = messages?.filter((m) => !('method' in m)) ?? [];
      if (!response.ok && (answers.length === 0 || requestId === undefined)) {
        throw httpFailure(this.config.server, this.config.shown, method, response.status, body.text);
      }
      if (messages === undefined) return this.noise.fire(body.text);
      // A POST carries one request: an error answer whose id the server could not tell (null) is that request's.
      for (const m of messages) this.deliver(requestId !== undefined && isNullIdError(m) ? { ...m, id: requestId } : m, requestId);
    } finally {
      if (!streaming) {
        this.posts.delete(controller);
        if (requestId !== undefined && this.streams.get(requestId) === controller) this.streams.delete(requestId);
      }
    }
  }

  close(graceMs?: number): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  // --- StreamHost ---

  deliver(message: JsonRpcMessage, relatedTo: RequestId | undefined): void {
    this.messages.fire(message, relatedTo === undefined ? {} : { relatedTo });
  }

  skipped(text: string): void {
    this.noise.fire(text);
  }

  oversized(bytes: number): void {
    this.fail(this.oversizedError(bytes));
  }

  async reopen(lastEventId: string | undefined, signal: AbortSignal): Promise<Response | undefined> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    if (this.protocolVersion !== undefined) headers['mcp-protocol-version'] = this.protocolVersion;
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    let response: Response;
    try {
      response = await exchange(this.config, { method: 'GET', headers, signal, idempotent: true, label: 'GET stream' });
    } catch (error) {
      if (error instanceof McpError && error.code === 'connect-failed' && !isAuthFailure(error)) this.fail(error);
      return undefined;
    }
    if (response.status === 404 && this.sessionId !== undefined) {
      await discardBody(response);
      this.fail(sessionExpired(this.config.server, this.sessionId));
      return undefined;
    }
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      // 405: the server offers no GET stream, which the spec allows.
      await discardBody(response);
      return undefined;
    }
    return response;
  }

  // --- internals ---

  /** A `tools/call`'s `Mcp-Param-*` headers, from the marks of the tool it names (SEP-2243). */
  private paramHeadersOf(message: JsonRpcMessage): Record<string, string> {
    const params = (message as { params?: { name?: unknown; arguments?: unknown } }).params;
    const marked = typeof params?.name === 'string' ? this.toolHeaders.get(params.name) : undefined;
    return marked === undefined ? {} : paramHeaders(marked, params?.arguments);
  }

  private async follow(response: Response, requestId: RequestId, controller: AbortController): Promise<void> {
    try {
      await followStream(this, response, {
        requestId,
        resumable: !isModernRevision(this.protocolVersion),
        reopenWithoutId: false,
        maxReconnects: this.options.maxReconnects ?? 3,
        reconnectDelayMs: this.options.reconnectDelayMs ?? 1000,
        signal: controller.signal,
      });
    } finally {
      this.posts.delete(controller);
      if (this.streams.get(requestId) === controller) this.streams.delete(requestId);
    }
  }

  /** The legacy GET stream for the server's own messages, opened once the session is initialized. */
  private startGetStream(): void {
    if (this.getStreamStarted || isModernRevision(this.protocolVersion)) return;
    this.getStreamStarted = true;
    const signal = this.lifetime.signal;
    void (async () => {
      const first = await this.reopen(undefined, signal);
      if (!first) return;
      await followStream(this, first, {
        resumable: true,
        reopenWithoutId: true,
        maxReconnects: this.options.maxReconnects ?? 3,
        reconnectDelayMs: this.options.reconnectDelayMs ?? 1000,
        signal,
      });
    })();
  }

  private fail(reason: McpError): void {
    if (this.closeReason) return;
    this.abortAll();
    void this.pool?.close();
    this.options.signal?.removeEventListener('abort', this.onSignal);
    this.fireClose(reason);
  }

  private async shutdown(graceMs: number | undefined): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.onSignal);
    this.abortAll();
    if (this.sessionId !== undefined && !this.closeReason) {
      const bound = Math.min(this.options.deleteTimeoutMs ?? 1000, graceMs ?? Number.POSITIVE_INFINITY);
      await deleteSession(this.config, this.sessionId, this.protocolVersion, bound);
    }
    await this.pool?.close();
    this.fireClose(new McpError('closed', `${serverLabel(this.config.server)}the HTTP channel was closed`, this.fields()));
  }

  /** Ends every request, stream and the GET stream: the channel is over. */
  private abortAll(): void {
    this.lifetime.abort();
    for (const controller of this.posts) controller.abort();
    this.posts.clear();
    this.streams.clear();
  }

  private closedError(): McpError {
    return this.closeReason ?? new McpError('closed', `${serverLabel(this.config.server)}the HTTP channel is closed`, this.fields());
  }

  private oversizedError(bytes: number): McpError {
    return new McpError(
      'protocol-error',
      `${serverLabel(this.config.server)}a message of ${bytes} bytes or more is over the ${this.maxMessageBytes}-byte limit (maxMessageBytes)`,
      this.fields(),
    );
  }

  private fields(): { server?: string } {
    return this.config.server === undefined ? {} : { server: this.config.server };
  }
}

function isNullIdError(message: JsonRpcMessage): boolean {
  return !('method' in message) && 'error' in message && message.error !== undefined && (message as { id?: unknown }).id === null;
}
