import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import { McpError, type McpPhase, serverLabel } from '../errors.js';
import { loadPTimeout } from '../util/deadline.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, type Channel } from '../transport/channel.js';
import { METHOD_NOT_FOUND } from '../transport/mcp-constants.js';
import { type ConnectOptions, DEFAULT_TIMEOUT_MS, type ListMethod, type Negotiated, type RequestOptions, type RequestScope } from './client-options.js';
import { connectCancelled, openChannel, start } from './connect.js';
import { RequestEngine } from './engine/engine.js';
import { ModernRequests } from './eras/input-rounds.js';
import { Listen } from './eras/listen.js';
import { Handshake } from './handshake.js';
import { HostRequests } from './host-requests.js';
import { paginate } from './paginate.js';
import type { ServerConfig } from './server-config.js';
import { admitTools, HEADER_MISMATCH } from './tool-headers.js';
import { type Label, NamedRequest } from './session-errors.js';
import { resultSchemas } from './schemas/lazy-schemas.js';
import type {
  CacheHints,
  CallOptions,
  CallToolResult,
  Completion,
  GetPromptResult,
  Implementation,
  LogMessage,
  Prompt,
  PromptRef,
  ProtocolEra,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceTemplateRef,
  ServerCapabilities,
  Tool,
} from './types.js';

export type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './server-config.js';
export { type ConnectOptions, DEFAULT_CLIENT_INFO, DEFAULT_TIMEOUT_MS, DISCOVER_PROBE_MS, type McpClientEvents, type RequestOptions, type RequestScope } from './client-options.js';

/**
 * One MCP session over one {@link Channel}, in either protocol era: negotiation, typed
 * requests with timeouts, cancellation and progress, the 2026 multi round-trip requests,
 * and the server's own requests and notifications. Its parts: {@link Handshake} (the
 * negotiation), {@link HostRequests} (answering the server's questions),
 * {@link ModernRequests} (2026 envelopes and input rounds), {@link Listen} (2026 subscriptions).
 */
export class McpClient extends EventEmitter {
  private readonly engine: RequestEngine;
  private readonly name: string | undefined;
  private readonly host: HostRequests;
  private readonly modern: ModernRequests;
  private readonly listen: Listen;
  private negotiated: Negotiated | undefined;
  private closing: Promise<void> | undefined;
  /** Aborted when the session ends: stops host handlers still answering for it. */
  private readonly ended = new AbortController();

  /**
   * Spawns the stdio server, or opens the channel to the remote one (`type` `"http"`,
   * `"streamable-http"` or `"sse"`), and negotiates the protocol.
   */
  static connect(config: ServerConfig, options: ConnectOptions = {}): Promise<McpClient> {
    if (options.signal?.aborted) return Promise.reject(connectCancelled(options.name, options.signal));
    return start(openChannel(config, options), options, (channel) => new McpClient(channel, options, config.timeout));
  }

  /** A session over a channel that is already open; the client owns it from now on (closes it on failure). */
  static over(channel: Channel, options: ConnectOptions = {}): Promise<McpClient> {
    if (options.signal?.aborted) {
      void channel.close(options.shutdownGraceMs);
      return Promise.reject(connectCancelled(options.name, options.signal));
    }
    return start(Promise.resolve(channel), options, (opened) => new McpClient(opened, options, undefined));
  }

  private constructor(
    private readonly channel: Channel,
    private readonly options: ConnectOptions,
    configTimeout: number | undefined,
  ) {
    super();
    this.name = options.name;
    this.engine = new RequestEngine(channel, { name: options.name, timeout: configTimeout ?? options.timeout ?? DEFAULT_TIMEOUT_MS });
    this.host = new HostRequests(this.engine, options, this.name, (method, callers) => this.emitSafely('unrouted', method, callers));
    this.modern = new ModernRequests(this.engine, this.host, this.name, this.ended.signal);
    this.listen = new Listen(this.engine, this.host, this.name, () => this.capabilities);
    for (const [event, listener] of Object.entries(options.listeners ?? {})) this.on(event, listener);
    channel.onStderr((line) => this.emitSafely('stderr', line));
    channel.onExit((status) => this.emitSafely('exit', status, this.engine.closedReason));
    channel.onNoise((text) => this.emitSafely('noise', text));
    this.engine.onInvalid((message) => this.emitSafely('noise', JSON.stringify(message).slice(0, 1000)));
    this.engine.onClose((reason) => {
      this.ended.abort(reason);
      this.emitSafely('close', reason);
    });
    this.listenToServer();
  }

  /** @internal The negotiation, bounded by the timeout (see {@link Handshake.negotiate}); then, in 2026, the first listen. */
  async handshake(): Promise<void> {
    const timeout = this.engine.defaultTimeout;
    const errors = this.engine.errors;
    const negotiation = new Handshake(this.engine, this.channel, this.host, this.options, this.name).negotiate();
    // The error only when it happens: making one (with its stack) costs every start ~25 µs.
    // Handled here too: it may fail while p-timeout loads (the first start of a process).
    negotiation.catch(() => undefined);
    const { default: pTimeout } = await loadPTimeout();
    this.negotiated = await pTimeout(negotiation, { milliseconds: timeout, fallback: () => Promise.reject(errors.initializeTimeout(timeout)) });
    // 2026: list changes come only through subscriptions/listen (legacy servers send them unasked).
    // Not awaited: a server that never acknowledges must not slow the start; the listen
    // is on the wire before any request the caller sends next.
    if (this.negotiated.era === '2026') void this.listen.update().catch(() => undefined);
  }

  /** @internal A failed start's error, with the server's last stderr lines. */
  startFailed(error: McpError, tail: string[]): McpError {
    return this.engine.errors.withStderr(error, tail);
  }

  /**
   * The cache hints (`ttlMs`, `cacheScope`) of the last listing by each list method,
   * 2026 era only: across its pages, the shortest lifetime, private if any page was.
   */
  get lastCacheHints(): Partial<Record<ListMethod, Required<CacheHints>>> {
    return this.modern.lastCacheHints;
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
    this.channel.setToolHeaders(admitted.headers);
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
      if (error instanceof McpError && error.code === 'rpc-error' && error.rpc?.code === METHOD_NOT_FOUND) return [];
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
    await this.listen.subscribe(uri, options?.timeout);
  }

  async unsubscribeResource(uri: string, options?: CallOptions): Promise<void> {
    if (this.era !== '2026') {
      await this.call('resources/unsubscribe', { uri }, resultSchemas().EmptyResultSchema, 'resources/subscribe', options);
      return;
    }
    await this.listen.unsubscribe(uri, options?.timeout);
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
  close(graceMs = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS): Promise<void> {
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
    return this.modern.call(method, params, schema, accepts, phase, options, label, withProgress, scope, finish);
  }

  private listenToServer(): void {
    const engine = this.engine;
    engine.onRequest('ping', () => ({}));
    engine.onNotification('notifications/message', (params) => {
      const parsed = resultSchemas().LogMessageParamsSchema.safeParse(params);
      if (parsed.success) this.emitSafely('log', { level: parsed.data.level, logger: parsed.data.logger, data: parsed.data.data });
    });
    engine.onNotification('notifications/tools/list_changed', () => this.emitSafely('toolsChanged'));
    engine.onNotification('notifications/resources/list_changed', () => this.emitSafely('resourcesChanged'));
    engine.onNotification('notifications/prompts/list_changed', () => this.emitSafely('promptsChanged'));
    engine.onNotification('notifications/resources/updated', (params) => {
      const uri = (params as { uri?: unknown } | undefined)?.uri;
      if (typeof uri === 'string') this.emitSafely('resourceUpdated', uri);
    });
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

function page(cursor: string | undefined): Record<string, unknown> {
  return cursor === undefined ? {} : { cursor };
}
