import type { Channel, Disposable, RequestId } from '../transport/channel.js';
import {
  ALL_PROTOCOL_VERSIONS,
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  UNSUPPORTED_PROTOCOL_VERSION,
} from '../transport/mcp-constants.js';
import type { McpError } from '../errors.js';
import { type IncomingRequestContext, RequestEngine } from './engine/engine.js';
import type { ListenFilter } from './eras/modern.js';
import { rpcFailure, toRpcError } from './rpc-errors.js';
import type { Implementation, Progress } from './types.js';

/** What the server half says of itself and how it answers. */
export interface McpServerOptions {
  /** Labels errors. Default `"client"`. */
  name?: string;
  /** Timeout of our own requests to the client (its questions), in ms, when a request gives none. Default 60000. */
  timeout?: number;
  /** Sent in `initialize`, `server/discover` and every 2026 result's `_meta`. */
  serverInfo: Implementation;
  /** The capabilities declared in `initialize` and `server/discover`. */
  capabilities: () => Record<string, unknown>;
  /** Told to the client in `initialize` and `server/discover`. Default none. */
  instructions?: () => string | undefined | Promise<string | undefined>;
  /**
   * 2026 methods whose complete results carry cache hints, with their `ttlMs`; the scope is
   * always `private` (what a client sees may depend on who it is). Default none.
   */
  cacheTtlMs?: ReadonlyMap<string, number>;
  /** The list changes a 2026 `subscriptions/listen` may be granted. Default none. */
  listenable?: () => ListenFilter;
  /** The JSON-RPC error a failed request is answered with. Default {@link toRpcError}. */
  toRpc?: (error: unknown) => McpError;
}

/** What a client may be asked: the capabilities it declared (legacy `initialize`, or a 2026 request's envelope). */
export interface DeclaredCapabilities {
  elicitation?: unknown;
  sampling?: unknown;
  roots?: unknown;
}

type ListChange = 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged';
const LIST_CHANGED: Record<ListChange, string> = {
  toolsListChanged: 'notifications/tools/list_changed',
  promptsListChanged: 'notifications/prompts/list_changed',
  resourcesListChanged: 'notifications/resources/list_changed',
};

/**
 * The server half of an MCP session over one {@link Channel}, in both eras, beside the
 * client: the handshake answers (`initialize`, `server/discover`, `ping`), the 2026
 * envelopes around every result, the revision checks, `subscriptions/listen`, list-change
 * notifications in each era's way, progress, and the questions we ask the client. What it
 * serves is registered with {@link handle}.
 */
export class McpServerSession {
  readonly engine: RequestEngine;
  /** Legacy era: set by `notifications/initialized`; list changes go only to initialized clients. */
  private ready = false;
  private declared: DeclaredCapabilities = {};
  /** 2026 era: the open `subscriptions/listen` requests, with what each was granted. */
  private readonly listens = new Map<RequestId, ListenFilter>();
  private readonly subscriptions: Disposable[] = [];
  private closing: Promise<void> | undefined;

  constructor(
    readonly channel: Channel,
    private readonly options: McpServerOptions,
  ) {
    this.engine = new RequestEngine(channel, { name: options.name ?? 'client', timeout: options.timeout ?? 60_000 });
    this.subscriptions.push(this.engine.onClose(() => this.ended()));
    this.engine.onRequest('initialize', (params) => this.initialize(params));
    this.engine.onNotification('notifications/initialized', () => void (this.ready = true));
    this.handle('server/discover', async () => ({
      supportedVersions: [MODERN_PROTOCOL_VERSION],
      capabilities: options.capabilities(),
      serverInfo: options.serverInfo,
      ...(await this.instructions()),
    }));
    this.handle('ping', () => ({}));
    this.handle('subscriptions/listen', (params, ctx) => this.listen(params, ctx));
  }

  /** Legacy era: whether the client said `notifications/initialized` (notifications go to it from then on). */
  get initialized(): boolean {
    return this.ready;
  }

  /** Legacy era: what the client declared in `initialize` (it can be asked only what it declared). */
  get clientCapabilities(): DeclaredCapabilities {
    return this.declared;
  }

  /** Fires once when the session ends. */
  onClose(listener: (reason: McpError) => void): Disposable {
    return this.engine.onClose(listener);
  }

  /**
   * Serves `method` in both eras: a request carrying the 2026-07-28 `_meta` envelope gets
   * a 2026 result (`resultType`, our identity in `_meta`, the cache hints), one naming a
   * revision we do not speak gets -32022 with the revisions we do, any other is legacy.
   * Every failure becomes a JSON-RPC error with our code and server in `data`. A result
   * marked by {@link asInputRequired} is sent as `input_required`.
   */
  handle(method: string, work: (params: Record<string, unknown>, ctx: IncomingRequestContext) => unknown): void {
    this.engine.onRequest(method, async (raw, ctx) => {
      const params = (raw ?? {}) as Record<string, unknown>;
      const version = (params._meta as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
      if (version !== undefined && !(ALL_PROTOCOL_VERSIONS as readonly unknown[]).includes(version)) {
        throw rpcFailure(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${JSON.stringify(version)}`, { supported: [MODERN_PROTOCOL_VERSION], requested: version });
      }
      let result: Record<string, unknown>;
      try {
        result = (await work(params, ctx)) as Record<string, unknown>;
      } catch (error) {
        throw (this.options.toRpc ?? toRpcError)(error);
      }
      return version === MODERN_PROTOCOL_VERSION ? this.enveloped(method, result) : result;
    });
  }

  /** A result of `method` in its 2026 form: `resultType`, our identity in `_meta`, the cache hints. */
  enveloped(method: string, result: Record<string, unknown>): Record<string, unknown> {
    const meta = { ...(result._meta as object | undefined), [SERVER_INFO_META_KEY]: this.options.serverInfo };
    if (inputRequired.has(result)) return { ...result, resultType: 'input_required', _meta: meta };
    const ttlMs = this.options.cacheTtlMs?.get(method);
    const hints = ttlMs === undefined ? {} : { ttlMs, cacheScope: 'private' };
    return { ...result, ...hints, resultType: 'complete', _meta: meta };
  }

  /** Tells the client a list changed, in its era's way: legacy once initialized, 2026 on each listen granted it. */
  listChanged(kind: ListChange): void {
    const method = LIST_CHANGED[kind];
    if (this.ready) this.engine.notify(method).catch(() => undefined);
    for (const [id, granted] of this.listens) {
      if (granted[kind]) this.engine.notify(method, { _meta: { [SUBSCRIPTION_ID_META_KEY]: id } }, { relatedTo: id }).catch(() => undefined);
    }
  }

  /** Progress of the client's request as `notifications/progress` on its stream, when it asked for progress (a `progressToken`). */
  progressOf(params: Record<string, unknown>, ctx: IncomingRequestContext): ((progress: Progress) => void) | undefined {
    const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    if (typeof token !== 'string' && typeof token !== 'number') return undefined;
    return (p: Progress) => {
      const body = { progressToken: token, progress: p.progress, ...(p.total === undefined ? {} : { total: p.total }), ...(p.message === undefined ? {} : { message: p.message }) };
      this.engine.notify('notifications/progress', body, { relatedTo: ctx.id }).catch(() => undefined);
    };
  }

  /**
   * Asks the client (a legacy-era question: elicitation, sampling, roots), on the stream of
   * its request `about` when known. `timeout` bounds the wait; the signal ends it sooner.
   */
  ask(method: string, params: object, options: { signal?: AbortSignal; timeout: number; about?: RequestId }): Promise<unknown> {
    return this.engine.request(
      { method, params: params as Record<string, unknown>, phase: 'tools/call', relatedTo: options.about },
      { signal: options.signal, timeout: options.timeout },
    );
  }

  /** Ends the connection (its requests in flight are cancelled). Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.engine.close().catch(() => undefined);
    return this.closing;
  }

  /** Legacy handshake: the client's revision when we speak it, else our newest legacy one. */
  private async initialize(raw: unknown): Promise<Record<string, unknown>> {
    const { capabilities, protocolVersion: requested } = (raw ?? {}) as { capabilities?: unknown; protocolVersion?: unknown };
    if (capabilities && typeof capabilities === 'object') this.declared = capabilities as DeclaredCapabilities;
    const protocolVersion = (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(requested) ? (requested as string) : LATEST_PROTOCOL_VERSION;
    this.channel.setProtocolVersion(protocolVersion);
    return { protocolVersion, capabilities: this.options.capabilities(), serverInfo: this.options.serverInfo, ...(await this.instructions()) };
  }

  private async instructions(): Promise<{ instructions?: string }> {
    const instructions = await this.options.instructions?.();
    return instructions === undefined ? {} : { instructions };
  }

  /**
   * 2026 `subscriptions/listen`: acknowledges the notifications we can send and keeps the
   * request open; its notifications travel related to it until it is cancelled.
   */
  private listen(params: Record<string, unknown>, ctx: IncomingRequestContext): Promise<Record<string, unknown>> {
    const wanted = (params.notifications ?? {}) as Record<string, unknown>;
    const offered = this.options.listenable?.() ?? {};
    const granted: ListenFilter = {};
    for (const kind of Object.keys(LIST_CHANGED) as ListChange[]) if (wanted[kind] === true && offered[kind]) granted[kind] = true;
    const meta = { [SUBSCRIPTION_ID_META_KEY]: ctx.id };
    this.engine.notify('notifications/subscriptions/acknowledged', { notifications: granted, _meta: meta }, { relatedTo: ctx.id }).catch(() => undefined);
    if (Object.keys(granted).length > 0) this.listens.set(ctx.id, granted);
    return new Promise((resolve) => {
      const done = () => {
        this.listens.delete(ctx.id);
        resolve({ _meta: meta });
      };
      if (ctx.signal.aborted) done();
      else ctx.signal.addEventListener('abort', done, { once: true });
    });
  }

  private ended(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.listens.clear();
  }
}

/** Results to send as 2026 `input_required` (see {@link McpServerSession.handle}). */
const inputRequired = new WeakSet<object>();

/** Marks a handler's result as a 2026 `input_required` answer (its `inputRequests` and `requestState`). */
export function asInputRequired<T extends object>(result: T): T {
  inputRequired.add(result);
  return result;
}

/** Whether a handler's result was marked with {@link asInputRequired}. */
export function isInputRequired(result: object): boolean {
  return inputRequired.has(result);
}
