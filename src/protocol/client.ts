import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import pTimeout from 'p-timeout';
import type { z } from 'zod';
import { McpError, type McpPhase, serverLabel } from '../errors.js';
import type { Channel, RequestId } from '../transport/channel.js';
import type { Framing } from '../transport/framing/framing.js';
import type { ExitStatus, ProcessSpec } from '../transport/stdio/server-process.js';
import { type IncomingRequestContext, RequestEngine } from './engine/engine.js';
import type { RequestFinish } from './engine/pending-requests.js';
import {
  combineCacheHints,
  decodeModernResult,
  type ListenFilter,
  type ModernResult,
  MAX_INPUT_ROUNDS,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  tooManyRounds,
  UNSUPPORTED_PROTOCOL_VERSION,
  withEnvelope,
} from './eras/modern.js';
import { paginate } from './paginate.js';
import { remoteChannelConfig, type ServerConfig, type StdioServerConfig } from './server-config.js';
import { admitTools, HEADER_MISMATCH } from './tool-headers.js';
import { type Label, NamedRequest } from './session-errors.js';
import { loadSchemas, resultSchemas } from './schemas/lazy-schemas.js';
import type { InitializeResultSchema } from './schemas/schemas.js';
import {
  ALL_PROTOCOL_VERSIONS,
  type CacheHints,
  type CallOptions,
  type CallToolResult,
  type Completion,
  type CreateMessageRequest,
  type ElicitRequest,
  type ElicitResult,
  type GetPromptResult,
  type HostHandlers,
  type HostRequestContext,
  type Implementation,
  LATEST_PROTOCOL_VERSION,
  type LogMessage,
  MODERN_PROTOCOL_VERSION,
  type Prompt,
  type PromptRef,
  type ProtocolEra,
  type ProtocolRevision,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ResourceTemplateRef,
  type Root,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from './types.js';

export type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './server-config.js';

/** Listeners for a client's events; given to `connect` so none of the early ones is missed. */
export interface McpClientEvents {
  /** One line the server wrote to stderr. */
  stderr: (line: string) => void;
  /** A `notifications/message` from the server. */
  log: (message: LogMessage) => void;
  /** A line on stdout that is not a JSON-RPC message (a stray `console.log`); it was skipped. */
  noise: (line: string) => void;
  toolsChanged: () => void;
  resourcesChanged: () => void;
  promptsChanged: () => void;
  /** `notifications/resources/updated` for a subscribed resource. */
  resourceUpdated: (uri: string) => void;
  /** The session ended; `reason` is `closed` after `close()`, else why the server went away. */
  close: (reason: McpError) => void;
  /** The server process exited; `reason` is why the session ended (`closed` when we closed it). */
  exit: (status: ExitStatus, reason: McpError | undefined) => void;
  /**
   * A legacy-era question no request claims, with requests of several callers in flight:
   * it cannot be tied to one, so the client's own handlers answer it (or it is declined).
   */
  unrouted: (method: string, callers: object[]) => void;
}

export interface ConnectOptions {
  /** Labels errors and messages: `server "fs": …`; also `HostRequestContext.server`. */
  name?: string;
  /** Sent as `clientInfo` (`initialize`, or every 2026 request's `_meta`). Default `{ name: "lazy-mcp", version: … }`. */
  clientInfo?: Implementation;
  /** Offered to the server through `roots/list`; the `roots` capability is declared only if given (or a roots handler). */
  roots?: Root[];
  /** Largest accepted message in bytes; a larger one closes the connection. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Default per-request timeout in ms when the server config has none. Default 30000. */
  timeout?: number;
  /** Grace for `close()` before SIGTERM/SIGKILL, in ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Listeners attached before the server is spawned. */
  listeners?: Partial<McpClientEvents>;
  /**
   * Aborts the start (spawn and handshake) only: `connect` rejects with `cancelled` at
   * once and the server is stopped in the background. Once connected the process is the client's.
   */
  signal?: AbortSignal;
  /** `"auto"` (default): 2026-07-28 when the server speaks it, else the newest legacy revision; or one revision to insist on. */
  protocolVersion?: 'auto' | ProtocolRevision;
  /** The era this server was found to speak before (e.g. from a cache): negotiation starts there instead of probing. */
  era?: ProtocolEra;
  /** The host's answers to the server's questions; the default for calls that bring none. */
  handlers?: HostHandlers;
  /**
   * Requests not sent yet because they wait for this connection (its start): a question no
   * request claims counts their callers as it counts those of the requests in flight.
   */
  waiting?: () => Iterable<RequestScope>;
  /** Declare these capabilities even without a default handler (calls bring their own). */
  capabilities?: { elicitation?: boolean; sampling?: boolean; roots?: boolean };
  /**
   * Checks an accepted form elicitation answer against the request's `requestedSchema`
   * (and applies its defaults) before it is sent; a throw declines. Default: sent as is.
   */
  validateElicitation?: (request: ElicitRequest, result: ElicitResult) => ElicitResult | Promise<ElicitResult>;
}

/** Per-request options, plus what the manager attaches to route a server's questions. */
export interface RequestOptions extends CallOptions {
  /** Answers the server's questions caused by this request (MRTR rounds, related legacy requests). Default: the client's. */
  handlers?: HostHandlers;
  /**
   * Who makes the request, compared by identity. A legacy server's question that no request
   * claims goes to this request's `handlers` when every request in flight (or waiting for
   * the connection, see `ConnectOptions.waiting`) that names a caller names this one; else
   * to the client's own handlers.
   */
  caller?: object;
  /** How the handlers' context names this tool call (the manager gives its public name). Default: the name and arguments sent. */
  toolCall?: { name: string; arguments: object };
  /** Makes the caller's outcome from the request's before its promise settles: see {@link RequestFinish}. */
  finish?: RequestFinish | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_CLIENT_INFO: Implementation = { name: 'lazy-mcp', version: '0.1.0' };
/** Longest wait for an answer to a `server/discover` probe before calling the server legacy. */
export const DISCOVER_PROBE_MS = 10_000;

/** What the negotiation found. */
interface Negotiated {
  era: ProtocolEra;
  protocolVersion: string;
  serverInfo: Implementation;
  capabilities: ServerCapabilities;
  instructions?: string;
}

/** What a request carries for the server's questions about it. */
export interface RequestScope {
  handlers?: HostHandlers;
  toolCall?: { name: string; arguments: object };
  caller?: object;
}

type ListMethod = 'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list';

/** A 2026 request that takes more than one round: what each round is sent with (see `callModern`). */
interface ModernCall<S extends z.ZodType> {
  began: number;
  method: string;
  params: Record<string, unknown>;
  schema: S;
  accepts: ((value: unknown) => boolean) | undefined;
  phase: McpPhase;
  options: RequestOptions;
  label: Label;
  withProgress: boolean | undefined;
  scope: RequestScope;
}

/**
 * One MCP session over one {@link Channel}, in either protocol era: negotiation, typed
 * requests with timeouts, cancellation and progress, the 2026 multi round-trip requests,
 * and the server's own requests and notifications.
 */
export class McpClient extends EventEmitter {
  private readonly engine: RequestEngine;
  private readonly name: string | undefined;
  private negotiated: Negotiated | undefined;
  private closing: Promise<void> | undefined;
  /** Aborted when the session ends: stops host handlers still answering for it. */
  private readonly ended = new AbortController();
  /** 2026: the open `subscriptions/listen` request, if any. */
  private listening: { id: number } | undefined;
  /** 2026: listens are replaced one at a time (a subscription change opens a new one, then cancels the old). */
  private relisten: Promise<unknown> = Promise.resolve();
  /** 2026: the resource URIs subscribed to, carried by every listen. */
  private readonly subscribedUris = new Set<string>();
  /** 2026: a listen's acknowledgement, by the listen's request id. */
  private readonly acks = new Map<number, (granted: ListenFilter) => void>();
  /**
   * The cache hints (`ttlMs`, `cacheScope`) of the last listing by each list method,
   * 2026 era only: across its pages, the shortest lifetime, private if any page was.
   */
  readonly lastCacheHints: Partial<Record<ListMethod, Required<CacheHints>>> = {};

  /**
   * Spawns the stdio server, or opens the channel to the remote one (`type` `"http"`,
   * `"streamable-http"` or `"sse"`), and negotiates the protocol.
   */
  static async connect(config: ServerConfig, options: ConnectOptions = {}): Promise<McpClient> {
    if (options.signal?.aborted) throw connectCancelled(options.name, options.signal);
    const remote = remoteChannelConfig(config, options.name);
    if (remote) {
      // Loaded when first used: a host of stdio servers only never pays for the HTTP transports.
      const { createHttpChannel } = await import('../transport/http/create-http-channel.js');
      const channel = createHttpChannel(remote, { name: options.name ?? remote.url, ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }) });
      return McpClient.start(Promise.resolve(channel), options, config.timeout);
    }
    const { framing, timeout: _timeout, type: _type, ...spec } = config as StdioServerConfig;
    // The stdio transport (process management, framing) loads with the first connection.
    const opening = import('../transport/stdio/stdio-channel.js').then(({ StdioChannel }) =>
      StdioChannel.open(spec, {
        name: options.name,
        framing,
        maxMessageBytes: options.maxMessageBytes,
        shutdownGraceMs: options.shutdownGraceMs,
      }),
    );
    return McpClient.start(opening, options, config.timeout);
  }

  /** A session over a channel that is already open; the client owns it from now on (closes it on failure). */
  static over(channel: Channel, options: ConnectOptions = {}): Promise<McpClient> {
    if (options.signal?.aborted) {
      void channel.close(options.shutdownGraceMs);
      return Promise.reject(connectCancelled(options.name, options.signal));
    }
    return McpClient.start(Promise.resolve(channel), options, undefined);
  }

  private static start(opening: Promise<Channel>, options: ConnectOptions, configTimeout: number | undefined): Promise<McpClient> {
    const { signal } = options;
    return new Promise<McpClient>((resolve, reject) => {
      let client: McpClient | undefined;
      let settled = false;
      // An abort rejects at once; the teardown it starts is owned by the channel and bounded by its grace.
      const onAbort = () => {
        if (settled) return;
        settled = true;
        reject(connectCancelled(options.name, signal!));
        if (client) void client.close();
        else opening.then((channel) => channel.close(options.shutdownGraceMs), () => undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const attempt = (async () => {
        // The schemas load while the server starts; both are needed before its first answer.
        const schemas = loadSchemas();
        schemas.catch(() => undefined); // awaited below; a failed open must not leave it unhandled
        const channel = await opening;
        if (settled) return undefined;
        // Subscribed at once: a server that exits (or writes stderr) while the schemas still load is seen.
        client = new McpClient(channel, options, configTimeout);
        await schemas;
        const timeout = client.engine.defaultTimeout;
        const errors = client.engine.errors;
        // The error only when it happens: making one (with its stack) costs every start ~25 µs.
        await pTimeout(client.negotiate(), { milliseconds: timeout, fallback: () => Promise.reject(errors.initializeTimeout(timeout)) });
        // 2026: list changes come only through subscriptions/listen (legacy servers send them unasked).
        // Not awaited: a server that never acknowledges must not slow the start; the listen
        // is on the wire before any request the caller sends next.
        if (client.era === '2026') void client.updateListen().catch(() => undefined);
        return client;
      })();
      attempt
        .then(
          (connected) => {
            if (!connected) return;
            if (settled) return void connected.close();
            settled = true;
            resolve(connected);
          },
          async (error: McpError) => {
            if (settled) return;
            const tail = client?.stderrTail() ?? [];
            await client?.close();
            if (settled) return;
            settled = true;
            reject(client ? client.engine.errors.withStderr(error, tail) : error);
          },
        )
        .finally(() => signal?.removeEventListener('abort', onAbort));
    });
  }

  private constructor(
    private readonly channel: Channel,
    private readonly options: ConnectOptions,
    configTimeout: number | undefined,
  ) {
    super();
    this.name = options.name;
    this.engine = new RequestEngine(channel, { name: options.name, timeout: configTimeout ?? options.timeout ?? DEFAULT_TIMEOUT_MS });
    for (const [event, listener] of Object.entries(options.listeners ?? {})) this.on(event, listener);
    channel.onStderr?.((line) => this.emitSafely('stderr', line));
    channel.onExit?.((status) => this.emitSafely('exit', status, this.engine.closedReason));
    channel.onNoise((text) => this.emitSafely('noise', text));
    this.engine.onInvalid((message) => this.emitSafely('noise', JSON.stringify(message).slice(0, 1000)));
    this.engine.onClose((reason) => {
      this.ended.abort(reason);
      this.emitSafely('close', reason);
    });
    this.listenToServer();
  }

  /** What the server said about itself (`initialize` or `server/discover`). */
  get serverInfo(): Implementation {
    return this.state.serverInfo;
  }
  get capabilities(): ServerCapabilities {
    return this.state.capabilities;
  }
  get instructions(): string | undefined {
    return this.state.instructions;
  }
  /** The revision in use: `2026-07-28` or the legacy revision the server answered. */
  get protocolVersion(): string {
    return this.state.protocolVersion;
  }
  /** `2026` (stateless revision 2026-07-28) or `legacy` (an `initialize` revision). */
  get era(): ProtocolEra {
    return this.state.era;
  }
  /** The server process's pid on stdio; NaN on a channel without a process. */
  get pid(): number {
    return this.channel.info.pid ?? Number.NaN;
  }
  /** The channel's transport: `stdio`, `http`, `sse` or `memory`. */
  get transport(): Channel['info']['transport'] {
    return this.channel.info.transport;
  }
  /** Bytes in and out so far, where the transport counts them (stdio); undefined elsewhere. */
  get traffic(): Channel['info']['traffic'] {
    return this.channel.info.traffic;
  }
  /** Whether the session still works (not closed, server not gone). */
  get isOpen(): boolean {
    return this.engine.closedReason === undefined;
  }
  /** Why the session ended (what `close` told); undefined while it is open. */
  get closedReason(): McpError | undefined {
    return this.engine.closedReason;
  }
  /** Requests waiting for an answer. */
  get inFlight(): number {
    return this.engine.inFlight;
  }
  stderrTail(): string[] {
    return this.channel.info.stderrTail();
  }

  listTools(options?: CallOptions): Promise<Tool[]> {
    const listed: Promise<Tool[]> = paginate(this.name, 'tools/list', 'tools', (cursor) => this.call('tools/list', page(cursor), resultSchemas().ListToolsResultSchema, 'tools/list', options));
    return this.mirrorsHeaders ? listed.then((tools) => this.admit(tools)) : listed;
  }

  /** A 2026 HTTP listing as SEP-2243 has the client take it: invalid marks left out (with a warning), the rest's marks to the transport. */
  private admit(tools: Tool[]): Tool[] {
    const admitted = admitTools(tools);
    for (const { name, reason } of admitted.rejected) {
      this.emitSafely('log', { level: 'warning', logger: 'lazy-mcp', data: `tool ${JSON.stringify(name)} is left out: ${reason}` } satisfies LogMessage);
    }
    this.channel.setToolHeaders?.(admitted.headers);
    return admitted.tools;
  }

  callTool(name: string, args: Record<string, unknown> = {}, options: RequestOptions = {}): Promise<CallToolResult> {
    // Options that name the call (the manager's) carry all a scope holds: they are the scope.
    const scope: RequestScope = options.toolCall ? options : { handlers: options.handlers, toolCall: { name, arguments: args }, caller: options.caller };
    const call = () => this.call('tools/call', { name, arguments: args }, resultSchemas().CallToolResultSchema, 'tools/call', options, new NamedRequest('tools/call', name), true, scope, true);
    if (!this.mirrorsHeaders) return call();
    // A tool this session has not listed (a cached manifest) or whose marks changed: the
    // server refuses the call before running it; list again for its marks, then retry once.
    return call().catch(async (error: unknown) => {
      if (!(error instanceof McpError) || error.rpc?.code !== HEADER_MISMATCH) throw error;
      await this.listTools(options);
      return call();
    });
  }

  /** Whether tool marks matter: a 2026 session over Streamable HTTP (SEP-2243; other transports may ignore them). */
  private get mirrorsHeaders(): boolean {
    return this.channel.info.transport === 'http' && this.state.era === '2026';
  }

  listPrompts(options?: CallOptions): Promise<Prompt[]> {
    return paginate(this.name, 'prompts/list', 'prompts', (cursor) => this.call('prompts/list', page(cursor), resultSchemas().ListPromptsResultSchema, 'prompts/list', options));
  }

  getPrompt(name: string, args: Record<string, string> = {}, options?: RequestOptions): Promise<GetPromptResult> {
    return this.call('prompts/get', { name, arguments: args }, resultSchemas().GetPromptResultSchema, 'prompts/get', options, new NamedRequest('prompts/get', name));
  }

  async complete(
    ref: PromptRef | ResourceTemplateRef,
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
    options?: CallOptions,
  ): Promise<Completion> {
    const params = { ref, argument, ...(context ? { context } : {}) };
    return (await this.call('completion/complete', params, resultSchemas().CompleteResultSchema, 'completion/complete', options)).completion;
  }

  listResources(options?: CallOptions): Promise<Resource[]> {
    return paginate(this.name, 'resources/list', 'resources', (cursor) =>
      this.call('resources/list', page(cursor), resultSchemas().ListResourcesResultSchema, 'resources/list', options),
    );
  }

  /** A server that answers -32601 (it has resources but no templates) has none: `[]`. */
  async listResourceTemplates(options?: CallOptions): Promise<ResourceTemplate[]> {
    try {
      return await paginate(this.name, 'resources/templates/list', 'resourceTemplates', (cursor) =>
        this.call('resources/templates/list', page(cursor), resultSchemas().ListResourceTemplatesResultSchema, 'resources/templates/list', options),
      );
    } catch (error) {
      if (error instanceof McpError && error.code === 'rpc-error' && error.rpc?.code === -32601) return [];
      throw error;
    }
  }

  readResource(uri: string, options?: RequestOptions): Promise<ReadResourceResult> {
    return this.call('resources/read', { uri }, resultSchemas().ReadResourceResultSchema, 'resources/read', options, `resources/read ${JSON.stringify(uri)}`);
  }

  /**
   * Subscribes to a resource's updates, which arrive as `resourceUpdated` events: legacy
   * `resources/subscribe`; in 2026 a new `subscriptions/listen` naming the URI, resolved
   * once the server acknowledges it.
   */
  async subscribeResource(uri: string, options?: CallOptions): Promise<void> {
    if (this.era !== '2026') {
      await this.call('resources/subscribe', { uri }, resultSchemas().EmptyResultSchema, 'resources/subscribe', options);
      return;
    }
    if (!this.capabilities.resources?.subscribe) throw this.noSubscriptions(uri, 'the server does not declare resources.subscribe');
    if (this.subscribedUris.has(uri)) return;
    this.subscribedUris.add(uri);
    const outcome = await this.updateListen(options?.timeout);
    if (outcome.granted?.resourceSubscriptions?.includes(uri)) return;
    this.subscribedUris.delete(uri);
    if (outcome.error) throw outcome.error;
    throw outcome.granted ? this.noSubscriptions(uri, 'the server did not grant it') : this.listenTimeout(options?.timeout);
  }

  async unsubscribeResource(uri: string, options?: CallOptions): Promise<void> {
    if (this.era !== '2026') {
      await this.call('resources/unsubscribe', { uri }, resultSchemas().EmptyResultSchema, 'resources/subscribe', options);
      return;
    }
    if (!this.subscribedUris.delete(uri)) return;
    await this.updateListen(options?.timeout);
  }

  /** Legacy `logging/setLevel`. The 2026 revision has no such method (a log level travels per request): a no-op there. */
  async setLogLevel(level: string, options?: CallOptions): Promise<void> {
    if (this.era === '2026') return;
    await this.call('logging/setLevel', { level }, resultSchemas().EmptyResultSchema, 'logging/setLevel', options);
  }

  /** The health probe: `ping` in the legacy era, `server/discover` in 2026 (which has no `ping`). */
  async ping(options?: CallOptions): Promise<void> {
    if (this.era === '2026') await this.call('server/discover', {}, resultSchemas().DiscoverResultSchema, 'discover', options);
    else await this.call('ping', {}, resultSchemas().EmptyResultSchema, 'ping', options);
  }

  /** Same as {@link ping}: the era's own liveness check. */
  probe(options?: CallOptions): Promise<void> {
    return this.ping(options);
  }

  /**
   * A request with a result schema, in the session's era: the 2026 envelope, `resultType`
   * and multi round-trip rounds are added when the era needs them.
   */
  request<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    phase: McpPhase,
    options: RequestOptions = {},
    withProgress = options.onProgress !== undefined,
    label: Label = method,
  ): Promise<z.infer<S>> {
    return this.call(method, params, schema, phase, options, label, withProgress);
  }

  /** Sends a notification to the server. */
  notify(method: string, params?: Record<string, unknown>): Promise<void> {
    return this.engine.notify(method, params);
  }

  /**
   * Ends the session: pending requests reject with `closed`, then the channel is closed
   * (a process: stdin, SIGTERM, SIGKILL within `shutdownGraceMs`). Idempotent; never throws.
   */
  close(graceMs = this.options.shutdownGraceMs ?? 2000): Promise<void> {
    this.closing ??= this.engine.close(graceMs).catch(() => undefined);
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private get state(): Negotiated {
    if (!this.negotiated) throw new McpError('protocol-error', `${serverLabel(this.name)}the session is not initialized`, { server: this.name });
    return this.negotiated;
  }

  private call<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    phase: McpPhase,
    options: RequestOptions = {},
    label: Label = method,
    withProgress?: boolean,
    scope: RequestScope = { handlers: options.handlers, caller: options.caller },
    /** `params` were made for this call: the progress token may go into them. */
    ownsParams = false,
  ): Promise<z.infer<S>> {
    // The usual tool result is vouched for by hand: zod would copy it for nothing (~4 µs).
    const schemas = resultSchemas();
    const accepts = (schema as z.ZodType) === schemas.CallToolResultSchema ? schemas.isPlainCallToolResult : undefined;
    const finish = options.finish;
    if (this.negotiated?.era !== '2026') return this.engine.request({ method, params, schema, accepts, phase, label, withProgress, ownsParams, scope, finish }, options);
    // A 2026 request may take several rounds: its finish waits for the last.
    const answer = this.callModern(method, params, schema, accepts, phase, options, label, withProgress, scope);
    return finish ? (answer.then((result) => finish.done(result), (error: unknown) => finish.failed(error)) as Promise<z.infer<S>>) : answer;
  }

  /**
   * A 2026 request: each round carries the `_meta` envelope; an `input_required` answer is
   * answered with the calling request's own handlers and the request sent again on a fresh
   * id with `inputResponses` and the `requestState` exactly as received. Not async: a
   * request answered in one round (nearly all) costs no extra turns of the microtask queue.
   */
  private callModern<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    accepts: ((value: unknown) => boolean) | undefined,
    phase: McpPhase,
    options: RequestOptions,
    label: Label,
    withProgress: boolean | undefined,
    scope: RequestScope,
  ): Promise<z.infer<S>> {
    const began = options.startedAt ?? performance.now();
    // The envelope is a fresh copy: the engine may add the progress token to it in place.
    const request = { method, params: withEnvelope(params, this.clientInfo, this.requestCapabilities(scope)), phase, label, withProgress, ownsParams: true, scope };
    return this.engine.request(request, options).then((raw) => {
      const decoded = decodeModernResult(this.name, phase, method, raw);
      if (decoded.kind === 'complete') return this.completed(decoded, method, params, schema, accepts, label, phase);
      return this.inputRounds(decoded, { began, method, params, schema, accepts, phase, options, label, withProgress, scope });
    });
  }

  /** A complete 2026 result: its cache hints kept (listings), then read by `schema`. */
  private completed<S extends z.ZodType>(
    decoded: Extract<ModernResult, { kind: 'complete' }>,
    method: string,
    params: Record<string, unknown>,
    schema: S,
    accepts: ((value: unknown) => boolean) | undefined,
    label: Label,
    phase: McpPhase,
  ): z.infer<S> {
    if (method.endsWith('/list')) {
      // A listing's later pages narrow what its first page said.
      const first = !('cursor' in params);
      const known = this.lastCacheHints[method as ListMethod];
      this.lastCacheHints[method as ListMethod] = first || !known ? decoded.hints : combineCacheHints(known, decoded.hints);
    }
    if (accepts?.(decoded.result)) return decoded.result as z.infer<S>;
    const parsed = schema.safeParse(decoded.result);
    if (!parsed.success) throw this.engine.errors.fromIssues({ label, phase }, parsed.error);
    return parsed.data;
  }

  /** The rounds after an `input_required` answer, until a complete result (see {@link callModern}). */
  private async inputRounds<S extends z.ZodType>(answered: Extract<ModernResult, { kind: 'input_required' }>, call: ModernCall<S>): Promise<z.infer<S>> {
    const { began, method, params, schema, accepts, phase, options, label, withProgress, scope } = call;
    let decoded: ModernResult = answered;
    for (let round = 1; ; round++) {
      if (decoded.kind === 'complete') return this.completed(decoded, method, params, schema, accepts, label, phase);
      if (round >= MAX_INPUT_ROUNDS) throw tooManyRounds(this.name, phase, label);
      const inputs = Object.entries(decoded.inputRequests);
      for (const [, input] of inputs) {
        const missing = this.missingInputHandler(input.method, scope, label, phase);
        if (missing) throw missing;
      }
      const inputResponses: Record<string, unknown> = {};
      // The handlers may wait on a person: they stop when the call is aborted or the session
      // ends. Linked by hand: AbortSignal.any leaks on a long-lived signal in Node 20.
      const stop = new AbortController();
      const onStop = () => stop.abort(options.signal?.aborted ? options.signal.reason : this.ended.signal.reason);
      if (options.signal?.aborted || this.ended.signal.aborted) onStop();
      options.signal?.addEventListener('abort', onStop, { once: true });
      this.ended.signal.addEventListener('abort', onStop, { once: true });
      try {
        const answering = Promise.all(
          inputs.map(async ([key, input]) => {
            try {
              inputResponses[key] = await this.answer(input.method, input.params, scope, stop.signal);
            } catch (error) {
              throw this.handlerFailed(error, input.method, label, phase);
            }
          }),
        );
        await this.unlessStopped(answering, stop.signal, { label, phase }, options.signal);
      } catch (error) {
        // One failed answer fails the call: the handlers still waiting (on a person, maybe) are stopped.
        stop.abort(error);
        throw error;
      } finally {
        options.signal?.removeEventListener('abort', onStop);
        this.ended.signal.removeEventListener('abort', onStop);
      }
      const retry = { inputResponses, ...(decoded.requestState === undefined ? {} : { requestState: decoded.requestState }) };
      // A later round is a new request: its `timeout` counts from its sending, `maxTotalTimeout` from the call's start.
      const total = options.maxTotalTimeout;
      const roundOptions = { ...options, startedAt: undefined, ...(total === undefined ? {} : { maxTotalTimeout: Math.max(0, total - (performance.now() - began)) }) };
      const sent = withEnvelope({ ...params, ...retry }, this.clientInfo, this.requestCapabilities(call.scope));
      const raw = await this.engine.request({ method, params: sent, phase, label, withProgress, ownsParams: true, scope }, roundOptions);
      decoded = decodeModernResult(this.name, phase, method, raw);
    }
  }

  /**
   * Why the client cannot answer one input request of an MRTR round, if it cannot: no
   * handler for it. Asking for a capability the client did not declare is the server's fault.
   */
  private missingInputHandler(method: string, scope: RequestScope, label: Label, phase: McpPhase): McpError | undefined {
    const kind = INPUT_KINDS[method];
    const fail = (why: string) => new McpError('protocol-error', `${serverLabel(this.name)}${label} asked for ${method} (input_required), ${why}`, { server: this.name, phase });
    if (!kind) return fail('which this client does not know');
    const handlers = scope.handlers ?? this.options.handlers ?? {};
    if (handlers[kind] || (kind === 'roots' && this.options.roots)) return undefined;
    const declared = this.clientCapabilities()[kind] !== undefined;
    // A declared elicitation without a handler for this call is declined (answer() does it).
    if (kind === 'elicitation' && declared) return undefined;
    return fail(`but this client has no ${kind} handler${declared ? ' for this call' : ' and did not declare the capability'}`);
  }

  /**
   * A host handler's failure to answer an input request, as the call's error: an
   * `McpError` it threw as it is; anything else as `rpc-error` with the JSON-RPC error a
   * legacy-era server would have got for it (-32603).
   */
  private handlerFailed(error: unknown, method: string, label: Label, phase: McpPhase): McpError {
    if (error instanceof McpError) return error;
    const why = error instanceof Error ? error.message : String(error);
    return new McpError('rpc-error', `${serverLabel(this.name)}${label} asked for ${method} (input_required), and the host's handler failed: ${why}`, {
      server: this.name,
      phase,
      rpc: { code: -32603, message: why },
      cause: error,
    });
  }

  /** Waits for `work` unless `signal` aborts first: then rejects with `cancelled` (the call's signal) or the session's end. */
  private async unlessStopped(work: Promise<unknown>, signal: AbortSignal, request: { label: Label; phase: McpPhase }, callSignal: AbortSignal | undefined): Promise<void> {
    const stopped = () =>
      callSignal?.aborted ? this.engine.errors.cancelled(request, callSignal) : this.engine.errors.forRequest(this.engine.closedReason ?? this.engine.errors.closed(), request);
    if (signal.aborted) throw stopped();
    work.catch(() => undefined);
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(stopped());
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Who a question no request claims is about: the one caller with requests in flight, when
   * exactly one has (with its call, when it has one request in flight); several callers or
   * none, or a capability this client did not declare: undefined, so the client's own
   * handlers answer. Never a guess between callers.
   */
  private soleCaller(method: string, questionId: RequestId): RequestScope | undefined {
    const kind = INPUT_KINDS[method];
    if (!kind || this.clientCapabilities()[kind] === undefined) return undefined;
    let found: RequestScope | undefined;
    let count = 0;
    const scopes = [...this.options.waiting?.() ?? []];
    const pending = this.engine.pendingRequests();
    for (const request of pending) scopes.push(request.scope as RequestScope);
    for (const scope of scopes) {
      if (scope?.caller === undefined) continue;
      if (found && found.caller !== scope.caller) {
        this.emitSafely('unrouted', method, [...new Set(scopes.map((s) => s?.caller).filter((c) => c !== undefined))]);
        return undefined;
      }
      found = scope;
      count++;
    }
    if (!found) return undefined;
    // The question is about that caller's requests in flight: it stops when they are all over.
    const caller = found.caller;
    this.engine.about(
      questionId,
      pending.filter((request) => (request.scope as RequestScope | undefined)?.caller === caller).map((request) => request.id),
    );
    return count > 1 ? { handlers: found.handlers, caller } : found;
  }

  /** Answers a server's question with the handlers of the request that caused it, else the client's. */
  private async answer(method: string, params: unknown, scope: RequestScope | undefined, signal: AbortSignal): Promise<unknown> {
    const handlers = scope?.handlers ?? this.options.handlers ?? {};
    const ctx: HostRequestContext = { server: this.name ?? '', signal, ...(scope?.toolCall ? { toolCall: scope.toolCall } : {}) };
    switch (method) {
      case 'elicitation/create': {
        if (!handlers.elicitation) return { action: 'decline' };
        const request = (params ?? {}) as ElicitRequest;
        const result = resultSchemas().ElicitResultSchema.parse(await handlers.elicitation(request, ctx));
        if (result.action !== 'accept' || !this.options.validateElicitation) return result;
        try {
          return await this.options.validateElicitation(request, result);
        } catch {
          return { action: 'decline' };
        }
      }
      case 'sampling/createMessage':
        if (handlers.sampling) return resultSchemas().CreateMessageResultSchema.parse(await handlers.sampling((params ?? {}) as CreateMessageRequest, ctx));
        break;
      case 'roots/list':
        if (handlers.roots) return { roots: await handlers.roots(ctx) };
        if (this.options.roots) return { roots: this.options.roots };
        break;
    }
    throw new McpError('rpc-error', `Method not found: ${method}`, { rpc: { code: -32601, message: `Method not found: ${method}` } });
  }

  private get clientInfo(): Implementation {
    return this.options.clientInfo ?? DEFAULT_CLIENT_INFO;
  }

  /** A capability is declared only when a handler for it exists or the `capabilities` option names it. */
  /** Built once: the options it reads are the session's, fixed at connect. */
  private declared: Record<string, unknown> | undefined;

  private clientCapabilities(): Record<string, unknown> {
    return (this.declared ??= this.declare());
  }

  private declare(handlers: HostHandlers = this.options.handlers ?? {}): Record<string, unknown> {
    const named = this.options.capabilities ?? {};
    const capabilities: Record<string, unknown> = {};
    if (this.options.roots || handlers.roots || named.roots) capabilities.roots = { listChanged: false };
    if (handlers.elicitation || named.elicitation) capabilities.elicitation = { form: {}, url: {} };
    if (handlers.sampling || named.sampling) capabilities.sampling = {};
    return capabilities;
  }

  /** The capabilities each set of a caller's handlers adds to the session's, made once per set. */
  private readonly declaredFor = new WeakMap<HostHandlers, Record<string, unknown>>();

  /**
   * 2026: what one request declares. Capabilities travel with each request, so a call
   * whose own handlers (a session's) answer elicitation, sampling or roots declares them
   * even when the session's defaults do not; else the session's declaration.
   */
  private requestCapabilities(scope: RequestScope | undefined): Record<string, unknown> {
    const session = this.clientCapabilities();
    const handlers = scope?.handlers;
    if (handlers === undefined || handlers === this.options.handlers) return session;
    let own = this.declaredFor.get(handlers);
    if (own === undefined) {
      const added = this.declare(handlers);
      // Nothing beyond the session's: share its object, so the common case sends the same one.
      own = Object.keys(added).every((kind) => kind in session) ? session : { ...session, ...added };
      this.declaredFor.set(handlers, own);
    }
    return own;
  }

  private listenToServer(): void {
    const engine = this.engine;
    engine.onRequest('ping', () => ({}));
    // Legacy server→client requests: the handlers of the request they relate to when the transport says so, else of the one caller in flight.
    // Either way the question is about those requests: it stops once they are all over (HostRequestContext.signal).
    for (const method of ['elicitation/create', 'sampling/createMessage', 'roots/list']) {
      engine.onRequest(method, (params, ctx: IncomingRequestContext) =>
        this.answer(method, params, (ctx.related?.scope as RequestScope | undefined) ?? this.soleCaller(method, ctx.id), ctx.signal),
      );
    }
    engine.onNotification('notifications/message', (params) => {
      const parsed = resultSchemas().LogMessageParamsSchema.safeParse(params);
      if (parsed.success) this.emitSafely('log', { level: parsed.data.level, logger: parsed.data.logger, data: parsed.data.data });
    });
    engine.onNotification('notifications/subscriptions/acknowledged', (params) => {
      const p = params as { notifications?: ListenFilter; _meta?: Record<string, unknown> } | undefined;
      const id = Number(p?._meta?.[SUBSCRIPTION_ID_META_KEY]);
      this.acks.get(id)?.(p?.notifications ?? {});
      this.acks.delete(id);
    });
    engine.onNotification('notifications/tools/list_changed', () => this.emitSafely('toolsChanged'));
    engine.onNotification('notifications/resources/list_changed', () => this.emitSafely('resourcesChanged'));
    engine.onNotification('notifications/prompts/list_changed', () => this.emitSafely('promptsChanged'));
    engine.onNotification('notifications/resources/updated', (params) => {
      const uri = (params as { uri?: unknown } | undefined)?.uri;
      if (typeof uri === 'string') this.emitSafely('resourceUpdated', uri);
    });
  }

  /**
   * Era negotiation. On stdio, `initialize` goes first and the 2026 era is tried only when
   * the server refuses it — SPEC's second strategy, chosen because it never costs a
   * process: a legacy server (most of them, and some exit on any request before
   * `initialize`) sees exactly the handshake it expects, no sibling process runs twice
   * (with its locks, ports and side effects), and a 2026-only server answers `initialize`
   * with an error naming its versions (the 2026-07-28 versioning page asks it to; the SDK
   * v2 stdio entry does, and keeps the connection open for `server/discover`). A dual-era
   * server therefore runs in the legacy era on stdio unless `protocolVersion` or `era`
   * says 2026. Where no process can be lost (any other channel), or with the `era: '2026'`
   * hint, `server/discover` goes first, bounded by {@link DISCOVER_PROBE_MS}, and any
   * error that is not a recognized modern one falls back to `initialize`.
   */
  private async negotiate(): Promise<void> {
    const wanted = this.options.protocolVersion ?? 'auto';
    if (wanted !== 'auto' && !(ALL_PROTOCOL_VERSIONS as readonly string[]).includes(wanted)) {
      throw new McpError(
        'invalid-config',
        `${serverLabel(this.name)}the protocolVersion option must be "auto" or one of ${ALL_PROTOCOL_VERSIONS.join(', ')}, got ${JSON.stringify(wanted)}`,
        { server: this.name, phase: 'config' },
      );
    }
    if (wanted === MODERN_PROTOCOL_VERSION) return this.discover(this.engine.defaultTimeout);
    if (wanted !== 'auto') return this.initialize(wanted);
    const modernFirst = this.options.era === '2026' || (this.options.era === undefined && this.channel.info.transport !== 'stdio');
    if (modernFirst) {
      try {
        return await this.discover(Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout / 2));
      } catch (error) {
        if (!legacyVerdict(error) && !offersLegacy(error) && !notADiscoverAnswer(error)) throw error;
      }
      return this.initialize(LATEST_PROTOCOL_VERSION);
    }
    try {
      return await this.initialize(LATEST_PROTOCOL_VERSION);
    } catch (refused) {
      if (!(refused instanceof McpError) || refused.code !== 'rpc-error') throw refused;
      try {
        return await this.discover(this.engine.defaultTimeout);
      } catch (error) {
        // Not a 2026 server either: the initialize refusal is what explains it.
        throw legacyVerdict(error) ? refused : error;
      }
    }
  }

  private async initialize(offered: string): Promise<void> {
    const result = await this.engine.request<z.infer<typeof InitializeResultSchema>>(
      {
        method: 'initialize',
        params: { protocolVersion: offered, capabilities: this.clientCapabilities(), clientInfo: this.clientInfo },
        schema: resultSchemas().InitializeResultSchema,
        phase: 'initialize',
        silentCancel: true,
      },
      { timeout: Infinity },
    );
    const insisted = this.options.protocolVersion !== undefined && this.options.protocolVersion !== 'auto';
    const accepted = insisted ? [offered] : (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]);
    if (!accepted.includes(result.protocolVersion)) {
      throw this.engine.errors.unsupportedVersion(result.protocolVersion, offered, insisted ? [offered] : SUPPORTED_PROTOCOL_VERSIONS);
    }
    this.negotiated = {
      era: 'legacy',
      protocolVersion: result.protocolVersion,
      serverInfo: result.serverInfo,
      capabilities: result.capabilities,
      instructions: result.instructions,
    };
    this.channel.setProtocolVersion?.(result.protocolVersion);
    await this.engine.notify('notifications/initialized');
  }

  /**
   * `server/discover`; a server that answers but does not speak 2026-07-28 is a `protocol-error`.
   * A refusal (-32022) whose `supported` list names the revision we speak is retried once with
   * it (SEP-2575: retry with a supported version): a server that lists it but refused this
   * request (a gateway that rewrote the header, a server restarted into that revision) is
   * still a 2026 server, not a reason to give up or to fall back to `initialize`.
   */
  private async discover(timeout: number, retried = false): Promise<void> {
    let raw: unknown;
    try {
      raw = await this.engine.request(
        { method: 'server/discover', params: withEnvelope({}, this.clientInfo, this.clientCapabilities()), phase: 'discover', silentCancel: true },
        { timeout },
      );
    } catch (error) {
      if (error instanceof McpError && error.rpc?.code === UNSUPPORTED_PROTOCOL_VERSION) {
        if (!retried && namesModern(error.rpc.data)) return this.discover(timeout, true);
        throw this.unsupportedModern(error.rpc.data);
      }
      throw error;
    }
    const decoded = decodeModernResult(this.name, 'discover', 'server/discover', raw);
    if (decoded.kind !== 'complete') throw new McpError('protocol-error', `${serverLabel(this.name)}server/discover asked for input`, { server: this.name, phase: 'discover' });
    const parsed = resultSchemas().DiscoverResultSchema.safeParse(decoded.result);
    if (!parsed.success) throw this.engine.errors.fromIssues({ label: 'server/discover', phase: 'discover' }, parsed.error);
    const result = parsed.data;
    if (!result.supportedVersions.includes(MODERN_PROTOCOL_VERSION)) throw this.unsupportedModern({ supported: result.supportedVersions });
    const metaInfo = (result._meta?.[SERVER_INFO_META_KEY] ?? undefined) as Implementation | undefined;
    this.negotiated = {
      era: '2026',
      protocolVersion: MODERN_PROTOCOL_VERSION,
      serverInfo: result.serverInfo ?? metaInfo ?? { name: 'unknown', version: '0.0.0' },
      capabilities: result.capabilities,
      instructions: result.instructions,
    };
    this.channel.setProtocolVersion?.(MODERN_PROTOCOL_VERSION);
  }

  private unsupportedModern(data: unknown): McpError {
    const supported = (data as { supported?: unknown } | undefined)?.supported;
    const list = Array.isArray(supported) ? supported.map(String).join(', ') : 'none named';
    const message = `${serverLabel(this.name)}the server speaks protocol versions ${list}; lazy-mcp speaks ${ALL_PROTOCOL_VERSIONS.join(', ')}`;
    // The list travels in `rpc.data.supported`, so a modern-first negotiation can still fall back to a legacy revision it names.
    const rpc = { code: UNSUPPORTED_PROTOCOL_VERSION, message: 'Unsupported protocol version', data: { supported: Array.isArray(supported) ? supported.map(String) : [] } };
    return new McpError('protocol-error', message, { server: this.name, phase: 'discover', rpc });
  }

  /**
   * 2026: opens a `subscriptions/listen` for what the session wants now (the list changes
   * the server declares, the subscribed URIs), waits for its acknowledgement (bounded),
   * then cancels the listen it replaces, so no notification falls in a gap. Resolves with
   * what the server granted; undefined when it did not acknowledge in time or refused.
   */
  private updateListen(timeout?: number): Promise<ListenOutcome> {
    const next = this.relisten.then(() => this.listen(timeout));
    this.relisten = next.catch(() => undefined);
    return next;
  }

  private async listen(timeout = Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout)): Promise<ListenOutcome> {
    const previous = this.listening;
    const stopPrevious = () => {
      if (previous && this.listening !== previous) this.engine.cancel(previous.id, new McpError('cancelled', 'replaced by a new subscriptions/listen', { server: this.name }));
    };
    const caps = this.capabilities;
    const filter: ListenFilter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
      ...(this.subscribedUris.size > 0 ? { resourceSubscriptions: [...this.subscribedUris] } : {}),
    };
    if (Object.keys(filter).length === 0 || !this.isOpen) {
      this.listening = undefined;
      stopPrevious();
      return { granted: {} };
    }
    let acknowledged!: (granted: ListenFilter) => void;
    const ack = new Promise<ListenFilter>((resolve) => (acknowledged = resolve));
    const current = { id: 0 };
    const done = this.engine.request(
      {
        method: 'subscriptions/listen',
        params: withEnvelope({ notifications: filter }, this.clientInfo, this.clientCapabilities()),
        phase: 'subscriptions/listen',
        onId: (id) => {
          current.id = id;
          this.acks.set(id, acknowledged);
        },
      },
      // It lasts as long as the session: its answer is the server ending it.
      { timeout: Infinity },
    );
    this.listening = current;
    // An answer (the server's graceful end), an error (a server without listen) or a cancel all end it.
    const ended = done.then(
      (): ListenOutcome => ({}),
      (error: McpError): ListenOutcome => ({ error }),
    );
    void ended.then(() => {
      this.acks.delete(current.id);
      if (this.listening === current) this.listening = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        ack.then((granted): ListenOutcome => ({ granted })),
        ended,
        new Promise<ListenOutcome>((resolve) => (timer = setTimeout(() => resolve({}), timeout))),
      ]);
      // Keep the old listen until the new one is in place; if the new one failed, the old one goes too.
      stopPrevious();
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  private noSubscriptions(uri: string, why: string): McpError {
    const message = `resource subscriptions are not supported: ${why}`;
    return new McpError('rpc-error', `${serverLabel(this.name)}subscriptions/listen for ${JSON.stringify(uri)} failed: ${message}`, {
      server: this.name,
      phase: 'resources/subscribe',
      rpc: { code: -32601, message },
    });
  }

  private listenTimeout(timeout = Math.min(DISCOVER_PROBE_MS, this.engine.defaultTimeout)): McpError {
    return new McpError('timeout', `${serverLabel(this.name)}subscriptions/listen was not acknowledged within ${timeout} ms`, { server: this.name, phase: 'subscriptions/listen' });
  }

  /** Emits without letting a listener's exception reach the engine or the channel. */
  private emitSafely(event: string, ...args: unknown[]): void {
    try {
      this.emit(event, ...args);
    } catch {
      // A listener's bug must not break the session.
    }
  }
}

/** How a `subscriptions/listen` went: `granted` once acknowledged; `error` if refused; neither if it was not acknowledged in time. */
interface ListenOutcome {
  granted?: ListenFilter;
  error?: McpError;
}

/** The host handler that answers each kind of input request. */
const INPUT_KINDS: Record<string, 'elicitation' | 'sampling' | 'roots' | undefined> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

function page(cursor: string | undefined): Record<string, unknown> {
  return cursor === undefined ? {} : { cursor };
}

/** Whether a failed probe says "legacy server": any answer or silence that is not a recognized modern error. */
function legacyVerdict(error: unknown): boolean {
  if (!(error instanceof McpError)) return false;
  if (error.code === 'timeout') return true;
  return error.code === 'rpc-error' && error.rpc?.code !== UNSUPPORTED_PROTOCOL_VERSION;
}

/** Whether a -32022 refusal's `supported` list names the 2026 revision we speak. */
function namesModern(data: unknown): boolean {
  const supported = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_PROTOCOL_VERSION);
}

/** Whether a refused `server/discover` names a legacy revision we speak: a server to reach through `initialize`. */
function offersLegacy(error: unknown): boolean {
  if (!(error instanceof McpError) || error.rpc?.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const supported = (error.rpc.data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.some((v) => (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(v));
}

/**
 * Whether a `server/discover` probe got a success answer that is no discover result (no
 * `resultType`, no `supportedVersions`): a lenient legacy server answering any method.
 */
function notADiscoverAnswer(error: unknown): boolean {
  return error instanceof McpError && error.code === 'protocol-error' && error.phase === 'discover' && error.rpc === undefined;
}

function connectCancelled(server: string | undefined, signal: AbortSignal): McpError {
  return new McpError('cancelled', `${serverLabel(server)}connect was cancelled`, { server, phase: 'connect', cause: signal.reason });
}
