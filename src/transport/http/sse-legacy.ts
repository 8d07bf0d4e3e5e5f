import { McpError, serverLabel } from '../../errors.js';
import type { Channel, ChannelInfo, JsonRpcMessage, MessageContext } from '../channel.js';
import { ChannelEvents } from '../channel-events.js';
import type { HttpChannelOptions } from './http-channel-options.js';
import { parseMessages } from './parse-messages.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../framing/framing-options.js';
import { ConnectionPool } from './connection-pool.js';
import { exchange, ExchangeAborted, exchangeConfig, type ExchangeConfig, isAuthFailure } from './http-exchange.js';
import { httpFailure } from './fetch-failure.js';
import { shownOrigin } from './shown-url.js';
import { discardBody } from './read-body.js';
import { DEFAULT_RETRY } from './retry-policy.js';
import { readSse } from './sse-reader.js';

/** Options of {@link SseLegacyChannel}. */
export interface SseLegacyOptions extends HttpChannelOptions {
  /** How long to wait for the `endpoint` event, in ms. Default 30000. */
  endpointTimeoutMs?: number;
}

/**
 * A {@link Channel} over the deprecated HTTP+SSE transport of 2024-11-05, for servers
 * with nothing newer: one long GET stream carries every server message; the stream's
 * first `endpoint` event names where to POST client messages (same origin only).
 * The stream opens when the channel is made.
 */
export class SseLegacyChannel extends ChannelEvents implements Channel {
  readonly info: ChannelInfo;
  private readonly config: ExchangeConfig;
  private readonly lifetime = new AbortController();
  /**
   * Each POST's own abort, ended with the channel. Not the lifetime signal itself: undici
   * keeps a listener on a request's signal past its answer, and one signal shared by every
   * POST gathered them by the thousand over a session (MaxListenersExceededWarning).
   */
  private readonly posts = new Set<AbortController>();
  private readonly maxMessageBytes: number;
  private readonly endpoint: Promise<URL>;
  private closing: Promise<void> | undefined;
  private readonly onSignal = () => void this.close();

  /** The channel's own connections, unless the options bring a `fetch`. */
  private readonly pool: ConnectionPool | undefined;

  constructor(private readonly options: SseLegacyOptions) {
    super();
    this.pool = options.fetch ? undefined : new ConnectionPool();
    this.config = exchangeConfig({ ...options, fetch: options.fetch ?? this.pool!.fetch }, DEFAULT_RETRY);
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.info = { transport: 'sse', url: this.config.shown, stderrTail: () => [], singleRequest: false };
    this.endpoint = this.connect();
    // Sends observe the failure; an unobserved one is still reported through onClose.
    this.endpoint.catch(() => {});
    if (options.signal?.aborted) void this.close();
    else options.signal?.addEventListener('abort', this.onSignal, { once: true });
  }

  get isOpen(): boolean {
    return this.closing === undefined && this.closeReason === undefined;
  }

  override async send(message: JsonRpcMessage, _context?: MessageContext): Promise<void> {
    if (!this.isOpen) throw this.closedError();
    const endpoint = await this.endpoint;
    const method = 'method' in message ? message.method : 'response';
    const controller = new AbortController();
    this.posts.add(controller);
    try {
      let response: Response;
      try {
        response = await exchange(
          { ...this.config, url: endpoint },
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(message),
            signal: controller.signal,
            idempotent: false,
            label: method,
          },
        );
      } catch (error) {
        if (error instanceof ExchangeAborted) throw this.closedError();
        if (error instanceof McpError && error.code === 'connect-failed' && !isAuthFailure(error)) this.fail(error);
        throw error;
      }
      const text = response.ok ? '' : await response.text().catch(() => '');
      if (response.ok) await discardBody(response);
      else throw httpFailure(this.config.server, `${shownOrigin(this.config.shown)}${endpoint.pathname}`, method, response.status, text);
    } finally {
      this.posts.delete(controller);
    }
  }

  /** Ends the stream and every POST in flight. */
  private abortAll(): void {
    this.lifetime.abort();
    for (const post of this.posts) post.abort();
    this.posts.clear();
  }

  close(_graceMs?: number): Promise<void> {
    this.closing ??= (async () => {
      this.options.signal?.removeEventListener('abort', this.onSignal);
      this.abortAll();
      await this.pool?.close();
      this.fireClose(new McpError('closed', `${serverLabel(this.config.server)}the SSE channel was closed`, this.fields()));
    })();
    return this.closing;
  }

  /** Opens the stream and resolves with the POST endpoint once the server names it. */
  private async connect(): Promise<URL> {
    const signal = this.lifetime.signal;
    let response: Response;
    try {
      response = await exchange(this.config, { method: 'GET', headers: { accept: 'text/event-stream' }, signal, idempotent: true, label: 'GET (SSE stream)' });
    } catch (error) {
      throw this.fail(error instanceof ExchangeAborted ? this.closedError() : (error as McpError));
    }
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('text/event-stream') || !response.body) {
      const text = await response.text().catch(() => '');
      throw this.fail(httpFailure(this.config.server, this.config.shown, 'GET (SSE stream)', response.status, text || `content-type ${response.headers.get('content-type')}`));
    }
    const body = response.body;
    const timeoutMs = this.options.endpointTimeoutMs ?? 30000;
    return new Promise<URL>((resolve, reject) => {
      let endpoint: URL | undefined;
      const timer = setTimeout(() => {
        reject(this.fail(new McpError('connect-failed', `${serverLabel(this.config.server)}no "endpoint" event on ${this.config.shown} within ${timeoutMs} ms`, { ...this.fields(), phase: 'connect' })));
      }, timeoutMs);
      void readSse(body, {
        maxEventBytes: this.maxMessageBytes,
        signal,
        onEvent: (event) => {
          if (event.event === 'endpoint') {
            if (endpoint) return;
            const target = this.resolveEndpoint(event.data);
            if (target instanceof McpError) return reject(this.fail(target));
            endpoint = target;
            clearTimeout(timer);
            return resolve(target);
          }
          if (event.event !== undefined && event.event !== 'message') return;
          const messages = parseMessages(event.data);
          if (!messages) return this.noise.fire(event.data);
          for (const message of messages) this.messages.fire(message, {});
        },
      }).then((end) => {
        clearTimeout(timer);
        let reason: McpError;
        if (end.kind === 'oversized') {
          reason = new McpError('protocol-error', `${serverLabel(this.config.server)}a message of ${end.bytes} bytes or more is over the ${this.maxMessageBytes}-byte limit (maxMessageBytes)`, this.fields());
        } else if (end.kind === 'aborted') {
          reason = this.closedError();
        } else {
          reason = new McpError('peer-eof', `${serverLabel(this.config.server)}the server closed its SSE stream ${this.config.shown}`, { ...this.fields(), cause: end.kind === 'dropped' ? end.cause : undefined });
        }
        reject(this.fail(reason));
      });
    });
  }

  private resolveEndpoint(data: string): URL | McpError {
    let target: URL;
    try {
      target = new URL(data.trim(), this.config.url);
    } catch {
      return new McpError('protocol-error', `${serverLabel(this.config.server)}the "endpoint" event is not a URL: ${JSON.stringify(data.slice(0, 200))}`, this.fields());
    }
    if (target.origin !== this.config.url.origin) {
      return new McpError('protocol-error', `${serverLabel(this.config.server)}the "endpoint" event points at another origin (${target.origin}); only ${shownOrigin(this.config.shown)} is accepted`, this.fields());
    }
    return target;
  }

  /** Ends the channel with `reason` (once) and returns the reason the channel ended with. */
  private fail(reason: McpError): McpError {
    if (!this.closeReason) {
      this.abortAll();
      void this.pool?.close();
      this.options.signal?.removeEventListener('abort', this.onSignal);
      this.fireClose(reason);
    }
    return this.closeReason ?? reason;
  }

  private closedError(): McpError {
    return this.closeReason ?? new McpError('closed', `${serverLabel(this.config.server)}the SSE channel is closed`, this.fields());
  }

  private fields(): { server?: string } {
    return this.config.server === undefined ? {} : { server: this.config.server };
  }
}
