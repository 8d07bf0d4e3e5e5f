import type { z } from 'zod';
import { McpError, type McpPhase } from '../../errors.js';
import type { Channel, Disposable, JsonRpcMessage, MessageContext, RequestId } from '../../transport/channel.js';
import { INTERNAL_ERROR, METHOD_NOT_FOUND } from '../../transport/mcp-constants.js';
import { Listeners } from '../../util/listeners.js';
import { copyWith } from '../../util/copy-with.js';
import { Questions } from './questions.js';
import { fail, fulfil, type PendingRequest, PendingRequests, refused, type RequestFinish } from './pending-requests.js';
import { type Label, SessionErrors } from '../session-errors.js';
import type { CallOptions } from '../types.js';
import { mustBe } from '../../util/check.js';

/** What a handler of an incoming request knows about it. */
export interface IncomingRequestContext {
  readonly id: RequestId;
  /** Aborted when the peer cancels the request (`notifications/cancelled`) or the channel ends. */
  readonly signal: AbortSignal;
  /** The request of ours this one is about, when the transport knows (e.g. it arrived on that request's HTTP stream). */
  readonly relatedTo?: RequestId;
  /** That request's record while it is still pending: its `scope` says who made it. */
  readonly related?: PendingRequest;
}

export type RequestHandler = (params: unknown, context: IncomingRequestContext) => unknown;
export type NotificationHandler = (params: unknown, context: MessageContext) => void;

/** One request to send; `options` come from the caller, the rest from the typed method. */
export interface OutgoingRequest {
  method: string;
  params: Record<string, unknown>;
  /** Validates the result; without one the raw result is resolved. */
  schema?: z.ZodType;
  /** A quick check that, when it holds, stands for `schema` (the result is taken as it is). */
  accepts?: (result: unknown) => boolean;
  phase: McpPhase;
  /** How messages name it: `tools/call "echo"`. Default: the method. */
  label?: Label;
  /** Adds `_meta.progressToken` (a `tools/call` always has one). Default: when `onProgress` is given. */
  withProgress?: boolean;
  /**
   * `params` (and its `_meta`, if any) were made for this request alone, so the progress
   * token goes into them in place. Default false: the caller's object is copied.
   */
  ownsParams?: boolean;
  /** Kept on the pending record for requests the peer makes about this one. */
  scope?: unknown;
  /** Never tell the peer about a cancellation (a handshake request, which cannot be cancelled). */
  silentCancel?: boolean;
  /**
   * The peer's request this one is about (a question on its tool call): the transport
   * carries it where that request's messages go (its HTTP stream, the daemon's mark).
   */
  relatedTo?: RequestId;
  /** Learns the request's id before it is sent (a long-lived request the caller may {@link RequestEngine.cancel} later). */
  onId?: (id: number) => void;
  /** Makes the caller's outcome from the request's, before the promise settles (see {@link RequestFinish}). */
  finish?: RequestFinish;
}

export interface RequestEngineOptions {
  /** Labels errors: `server "fs": …`. */
  name?: string;
  /** Per-request timeout in ms when the call gives none. */
  timeout: number;
}

/**
 * The role-neutral half of an MCP session over one {@link Channel}: ids, pending
 * requests with one shared deadline timer, progress, cancellation both ways, handlers
 * for the peer's requests and notifications, and the end of everything at once when the
 * channel closes. Client and (later) server sides are built on it.
 *
 * Answers and notifications are matched synchronously in arrival order, with no
 * per-message scheduling: they are the hot path with many calls in flight.
 */
export class RequestEngine {
  readonly errors: SessionErrors;
  private readonly pending = new PendingRequests(
    (request, why) =>
      this.cancel(request.id, why === 'total' ? this.errors.timeout(request, request.totalTimeoutMs!, ' in total') : this.errors.timeout(request, request.timeoutMs)),
    (request, signal) => this.cancel(request.id, this.errors.cancelled(request, signal)),
  );
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly incoming = new Map<RequestId, AbortController>();
  /** The peer's requests about requests of ours (see {@link about}); made at the first. */
  private questions: Questions | undefined;
  private readonly closeListeners = new Listeners<[McpError]>();
  private readonly invalidListeners = new Listeners<[unknown]>();
  private readonly subscriptions: Disposable[];
  private nextId = 0;
  private endReason: McpError | undefined;
  readonly defaultTimeout: number;

  constructor(
    readonly channel: Channel,
    options: RequestEngineOptions,
  ) {
    this.errors = new SessionErrors(options.name);
    this.defaultTimeout = options.timeout;
    this.subscriptions = [channel.onMessage((message, context) => this.receive(message, context)), channel.onClose((reason) => this.end(reason))];
    if (!channel.isOpen) this.end(this.errors.closed());
  }

  /** Why the session ended; undefined while it is open. */
  get closedReason(): McpError | undefined {
    return this.endReason;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** The requests still waiting for their answers, oldest first: a copy. */
  pendingRequests(): PendingRequest[] {
    return this.pending.values();
  }

  /** The record of a request still waiting for its answer. */
  pendingRequest(id: unknown): PendingRequest | undefined {
    return this.pending.get(id);
  }

  /**
   * The peer's request `incomingId`, being answered, is about our requests `ids` (the
   * request it arrived on, or the calls of the one caller it is attributed to): once every
   * one of them is over (answered, timed out, cancelled, by its caller or its session),
   * the handler's signal aborts. A request already over does not count.
   */
  about(incomingId: RequestId, ids: readonly number[]): void {
    const controller = this.incoming.get(incomingId);
    if (!controller || controller.signal.aborted) return;
    const live = ids.filter((id) => this.pending.get(id) !== undefined);
    if (live.length === 0) return;
    (this.questions ??= new Questions()).add(controller, live);
  }

  /** Answers the peer's requests for `method`; a throw becomes a JSON-RPC error (an `McpError` keeps its `rpc` code). */
  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.set(method, handler);
  }

  /** Fires once when the session ends, with the reason. */
  onClose(listener: (reason: McpError) => void): Disposable {
    return this.closeListeners.add(listener);
  }

  /** A message that is neither a request, an answer nor a notification. */
  onInvalid(listener: (message: unknown) => void): Disposable {
    return this.invalidListeners.add(listener);
  }

  /**
   * The one request path: sends, waits with a timeout that progress may restart,
   * cancels on timeout or abort, validates the answer.
   */
  request<T = unknown>(request: OutgoingRequest, options: CallOptions = {}): Promise<T> {
    const { method, params, phase } = request;
    const label = request.label ?? method;
    const finish = request.finish;
    if (this.endReason) return refused(this.errors.forRequest(this.endReason, { label, phase }), finish);
    const { signal } = options;
    if (signal?.aborted) return refused(this.errors.cancelled({ label, phase }, signal), finish);
    const badOption = invalidDuration(options, 'timeout') ?? invalidDuration(options, 'maxTotalTimeout');
    if (badOption) return refused(badOption, finish);
    const id = ++this.nextId;
    const timeoutMs = options.timeout ?? this.defaultTimeout;
    const promise = new Promise<T>(capture);
    const { resolve, reject } = captured;
    // Held no longer than this: the last promise would keep its result alive.
    captured.resolve = captured.reject = nothing;
    // A request whose time-outs began before it (the call waited for a start) has that much less to wait.
    const sentAt = performance.now();
    const startedAt = options.startedAt;
    const now = startedAt !== undefined && Number.isFinite(startedAt) && startedAt < sentAt ? startedAt : sentAt;
    const record: PendingRequest = {
      id,
      label,
      phase,
      schema: request.schema,
      accepts: request.accepts,
      timeoutMs,
      totalTimeoutMs: options.maxTotalTimeout,
      resetTimeoutOnProgress: options.resetTimeoutOnProgress ?? true,
      onProgress: options.onProgress,
      resolve,
      reject,
      deadline: now + timeoutMs,
      totalDeadline: options.maxTotalTimeout === undefined ? Infinity : now + options.maxTotalTimeout,
      scope: request.scope,
      signal,
      finish,
    };
    if (request.silentCancel) silent.add(record);
    this.pending.add(record);
    request.onId?.(id);
    const withProgress = request.withProgress ?? options.onProgress !== undefined;
    const sent = withProgress ? withProgressToken(params, id, request.ownsParams === true) : params;
    const message = { jsonrpc: '2.0', id, method, params: sent } as JsonRpcMessage;
    try {
      this.channel.post(message, this.undelivered, request.relatedTo === undefined ? undefined : { relatedTo: request.relatedTo });
    } catch (error) {
      // A channel that throws instead of reporting: this request fails alone, as one it could not send.
      this.undelivered(new McpError('protocol-error', (error as Error)?.message ?? String(error), { cause: error }), message);
    }
    return promise;
  }

  /**
   * A request's message could not be delivered: it fails alone. A dead channel fails
   * everything through onClose instead. One function for every request, not a closure each.
   */
  private readonly undelivered = (error: unknown, message: JsonRpcMessage): void => {
    if (!(error instanceof McpError) || error.code === 'peer-eof' || error.code === 'peer-exited' || error.code === 'closed') return;
    const record = this.pending.take((message as { id?: unknown }).id);
    if (!record) return;
    this.questions?.over(record.id, error);
    fail(record, error.code === 'protocol-error' ? this.errors.unsendable(record, error) : this.errors.forRequest(error, record));
  };

  /** Sends a notification; rejects when the session is over. */
  async notify(method: string, params?: Record<string, unknown>, context?: MessageContext): Promise<void> {
    if (this.endReason) throw this.errors.forRequest(this.endReason, { label: method, phase: this.endReason.phase ?? 'initialize' });
    await this.channel.send({ jsonrpc: '2.0', method, params } as JsonRpcMessage, context);
  }

  /** Gives up on a request: tells the peer (unless it is a handshake) and rejects the caller. */
  cancel(id: number, error: McpError): void {
    const request = this.pending.take(id);
    if (!request) return;
    this.questions?.over(id, error);
    if (!this.endReason && !silent.has(request)) this.channel.abandon(id, error.message);
    fail(request, error);
  }

  /** Ends the channel (which ends the session with `closed`). Idempotent; never throws. */
  close(graceMs?: number): Promise<void> {
    this.end(this.errors.closed());
    return this.channel.close(graceMs);
  }

  private receive(message: JsonRpcMessage, context: MessageContext): void {
    const m = message as unknown as Record<string, unknown>;
    if (typeof m.method === 'string') {
      if (m.id === undefined || m.id === null) this.notification(m.method, m.params, context);
      else void this.serve(m.id as RequestId, m.method, m.params, context);
    } else if (m.id !== undefined && ('result' in m || 'error' in m)) {
      this.settle(m.id, m.result, m.error);
    } else {
      this.invalidListeners.fire(message);
    }
  }

  private settle(id: unknown, result: unknown, error: unknown): void {
    // An answer for an id we no longer wait on (cancelled, timed out) is dropped.
    const request = this.pending.take(id);
    if (!request) return;
    this.questions?.over(request.id, undefined);
    if (error !== undefined && error !== null) return fail(request, this.errors.rpc(request, error));
    if (!request.schema || request.accepts?.(result)) return fulfil(request, result);
    const parsed = request.schema.safeParse(result);
    if (parsed.success) fulfil(request, parsed.data);
    else fail(request, this.errors.fromIssues(request, parsed.error));
  }

  private notification(method: string, params: unknown, context: MessageContext): void {
    if (method === 'notifications/progress') return this.progress(params);
    if (method === 'notifications/cancelled') {
      const requestId = (params as { requestId?: RequestId } | undefined)?.requestId;
      const controller = requestId === undefined ? undefined : this.incoming.get(requestId);
      if (controller) {
        peerCancelled.add(controller);
        controller.abort(new McpError('cancelled', 'the peer cancelled the request'));
      }
    }
    const handler = this.notificationHandlers.get(method);
    if (!handler) return;
    try {
      handler(params, context);
    } catch {
      // A listener's bug must not break the connection.
    }
  }

  private progress(params: unknown): void {
    if (!isProgressParams(params)) return;
    const request = this.pending.get(params.progressToken);
    if (!request) return;
    if (request.resetTimeoutOnProgress) request.deadline = performance.now() + request.timeoutMs;
    const { progress, total, message } = params;
    try {
      request.onProgress?.({ progress, total, message });
    } catch {
      // A listener's bug must not break the connection.
    }
  }

  private async serve(id: RequestId, method: string, params: unknown, context: MessageContext): Promise<void> {
    const reply = (body: { result: unknown } | { error: { code: number; message: string; data?: unknown } }) => {
      if (this.endReason) return;
      const answer = { jsonrpc: '2.0', id, ...body } as JsonRpcMessage;
      this.channel.send(answer, context.relatedTo === undefined ? undefined : { relatedTo: context.relatedTo }).catch(() => undefined);
    };
    const handler = this.requestHandlers.get(method);
    if (!handler) return reply({ error: { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` } });
    const controller = new AbortController();
    this.incoming.set(id, controller);
    try {
      const related = context.relatedTo === undefined ? undefined : this.pending.get(context.relatedTo);
      if (related) this.about(id, [related.id]);
      const result = await handler(params, { id, signal: controller.signal, relatedTo: context.relatedTo, related });
      // MCP: no answer to a request the peer cancelled. One stopped on our side (its call is
      // over) is still answered, so the peer is not left waiting for it.
      if (!peerCancelled.has(controller)) reply({ result: result ?? {} });
    } catch (error) {
      if (peerCancelled.has(controller)) return;
      const rpc = error instanceof McpError ? error.rpc : undefined;
      reply({ error: { code: rpc?.code ?? INTERNAL_ERROR, message: rpc?.message ?? (error instanceof Error ? error.message : String(error)), ...(rpc?.data === undefined ? {} : { data: rpc.data }) } });
    } finally {
      this.incoming.delete(id);
      this.questions?.answered(controller);
    }
  }

  /** The session is over: every pending request rejects at once, every handler's signal aborts. */
  private end(reason: McpError): void {
    if (this.endReason) return;
    this.endReason = reason;
    this.pending.rejectAll((request) => this.errors.forRequest(reason, request));
    for (const controller of this.incoming.values()) controller.abort(reason);
    this.incoming.clear();
    this.questions = undefined;
    for (const subscription of this.subscriptions ?? []) subscription.dispose();
    this.closeListeners.fire(reason);
    this.closeListeners.clear();
  }
}

/** `params` with `_meta.progressToken` set to `token`: in place when they are the request's own, else a copy. */
function withProgressToken(params: Record<string, unknown>, token: number, own: boolean): Record<string, unknown> {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (!own) return copyWith(params, '_meta', copyWith(meta, 'progressToken', token));
  if (meta === undefined) params._meta = { progressToken: token };
  else meta.progressToken = token;
  return params;
}

/**
 * The resolving functions of the promise just made: one executor for every request, where
 * an arrow per request would cost each a closure and its context.
 */
const nothing = (): void => undefined;
const captured: { resolve: (value: unknown) => void; reject: (error: McpError) => void } = { resolve: nothing, reject: nothing };
function capture(resolve: (value: never) => void, reject: (error: McpError) => void): void {
  captured.resolve = resolve as (value: unknown) => void;
  captured.reject = reject;
}

/** The controllers of the peer's requests the peer cancelled: those are never answered. */
const peerCancelled = new WeakSet<AbortController>();

/** Requests never to be cancelled on the wire (handshakes). A WeakSet, so the hot record stays small. */
const silent = new WeakSet<PendingRequest>();

/** An error for a per-request duration option that is not a non-negative number of ms (or Infinity). */
function invalidDuration(options: CallOptions, field: 'timeout' | 'maxTotalTimeout'): McpError | undefined {
  const value = options[field];
  if (value === undefined || (typeof value === 'number' && value >= 0)) return undefined;
  return new McpError('invalid-config', `the option ${mustBe(field, 'a non-negative number of milliseconds', value)}`, {});
}

/**
 * `notifications/progress` params as the spec shapes them, checked by hand: a server may
 * report progress before anything else needs a schema library (a gateway's host, too).
 */
function isProgressParams(params: unknown): params is { progressToken: string | number; progress: number; total?: number; message?: string } {
  if (typeof params !== 'object' || params === null) return false;
  const { progressToken, progress, total, message } = params as Record<string, unknown>;
  return (
    (typeof progressToken === 'string' || typeof progressToken === 'number') &&
    typeof progress === 'number' &&
    (total === undefined || typeof total === 'number') &&
    (message === undefined || typeof message === 'string')
  );
}
