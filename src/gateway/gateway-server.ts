import { McpError } from '../errors.js';
import type { McpServerManager } from '../manager/manager.js';
import type { ToolSession } from '../manager/scope/session.js';
import type { ToolFilter } from '../manager/catalog/tool-filter.js';
import { runSearchAndCall, SEARCH_TOOLS_NAME, searchAndCallTools } from '../model/search-call-tools.js';
import { DEFAULT_CLIENT_INFO } from '../protocol/client.js';
import type { IncomingRequestContext } from '../protocol/engine/engine.js';
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '../protocol/eras/modern.js';
import { McpServerSession } from '../protocol/server.js';
import { type CallOptions, type HostHandlers, type HostRequestContext, type Implementation, MODERN_PROTOCOL_VERSION, type Progress } from '../protocol/types.js';
import type { Channel, RequestId } from '../transport/channel.js';
import { INVALID_PARAMS, RESOURCE_NOT_FOUND, rpcFailure } from '../protocol/rpc-errors.js';
import { InputRounds, PendingCall } from '../protocol/server-rounds.js';
import { complete } from './completion.js';
import { askingHandlers } from '../protocol/asking-handlers.js';
import { ResourceRouter, serverUri } from './resource-router.js';
import { AccessControl, type Limits } from '../share/principals/access.js';
import type { Identity } from '../share/principals/jwt-front.js';
import type { LimitStore } from '../share/principals/limit-store.js';
import type { Policy } from '../share/principals/policies.js';
import { mustBe } from '../util/check.js';

/** How the pool is presented to the gateway's clients. */
export interface GatewayOptions {
  /**
   * Search mode: list two tools, `search_tools` and `call_tool`, instead of every tool (for
   * hosts without deferred tool loading). Default false.
   */
  search?: boolean;
  /** Only these servers of the pool. Default: all. */
  servers?: string[];
  /** Globs over raw tool names, on top of each server's own filter. */
  tools?: ToolFilter;
  /** What the gateway says it is. Default `{ name: "lazy-mcp", version }`. */
  serverInfo?: Implementation;
  /**
   * Told to clients in `initialize` / `server/discover`, as given. Default: a line on the
   * naming scheme (or on search mode), then each backend's own `instructions` under its
   * server's name (those known without starting anything: from a start or the manifest cache).
   */
  instructions?: string;
  /**
   * 2026-era clients: how long a call that asked the client for input (`input_required`)
   * waits for the client's retry before it is cancelled and its `requestState` forgotten,
   * in ms. Default 10 minutes (a person may be answering).
   */
  inputTimeoutMs?: number;
  /** Makes each round's `requestState` (a cluster seals it so any member routes the retry back). Default: random. */
  roundState?: (lifetimeMs: number) => string;
  /** Callers with a verified token (HTTP `auth`): which tools each may use, by the token's scopes and claims. Default: all. */
  policies?: Policy[];
  /** Callers with a verified token: per-principal and per-tool rate limits (token buckets). Default: none. */
  limits?: Limits;
  /** Where the rate limits' buckets live. Default: this process's memory. */
  limitStore?: LimitStore;
}

/** A backend's question may wait on a person: an hour at most, unless the call ends first. */
const ASK_TIMEOUT_MS = 3_600_000;
const DEFAULT_INPUT_TIMEOUT_MS = 600_000;
/** Most characters of one backend's instructions passed on. */
const MAX_BACKEND_INSTRUCTIONS = 16_384;

/**
 * 2026 methods whose results must carry cache hints, with the `ttlMs` the gateway gives
 * them: a client may keep the pool's description and tool list a minute (a subscribed
 * client hears tools/list_changed at once), the other listings, which change unannounced,
 * ten seconds; a resource's contents are the backend's and may change at any time. Always
 * `private`: what a client sees may depend on who it is.
 */
const CACHE_TTL_MS: ReadonlyMap<string, number> = new Map([
  ['server/discover', 60_000],
  ['tools/list', 60_000],
  ['prompts/list', 10_000],
  ['resources/list', 10_000],
  ['resources/templates/list', 10_000],
  ['resources/read', 0],
]);

/**
 * The pool presented as one MCP server: shared by every client connection (each of which
 * is one {@link GatewayConnection}, i.e. one session of the pool), it holds the manager,
 * what the gateway learned of resource owners, and the connections to tell of changes.
 */
export class Gateway {
  readonly router = new ResourceRouter();
  /** 2026-era calls waiting on their client's answers, by `requestState`: gateway-wide, as each stateless round is a new connection. */
  readonly rounds: InputRounds;
  readonly serverInfo: Implementation;
  readonly instructions: string;
  private readonly connections = new Set<GatewayConnection>();
  private readonly onToolsChanged = () => this.toolsChanged();
  private changePending = false;
  private closed = false;

  constructor(
    readonly manager: McpServerManager,
    readonly options: GatewayOptions = {},
  ) {
    this.serverInfo = options.serverInfo ?? { name: 'lazy-mcp', version: DEFAULT_CLIENT_INFO.version };
    this.instructions =
      options.instructions ??
      (options.search
        ? 'Tools of several MCP servers. Call search_tools with a few words to find the tools for a task, then call_tool with the name it gives.'
        : 'Tools of several MCP servers, named mcp__<server>__<tool>.');
    const inputTimeoutMs = options.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS;
    if (typeof inputTimeoutMs !== 'number' || !(inputTimeoutMs > 0) || inputTimeoutMs > 2 ** 31 - 1) {
      throw new McpError('invalid-arguments', `gateway option ${mustBe('inputTimeoutMs', 'a positive number of milliseconds up to 2147483647', inputTimeoutMs)}`, {});
    }
    this.rounds = new InputRounds(inputTimeoutMs, options.roundState);
    if (options.policies || options.limits) this.access = new AccessControl({ policies: options.policies, limits: options.limits, store: options.limitStore });
    manager.on('toolsChanged', this.onToolsChanged);
  }

  /** Principals: policies and limits of callers with a verified token. */
  private readonly access: AccessControl | undefined;

  /** Serves one client over `channel` until either side closes it; `identity`: who its verified token says it is. */
  connect(channel: Channel, identity?: Identity): GatewayConnection {
    if (this.closed) {
      void channel.close();
      throw new McpError('closed', 'the gateway was closed', {});
    }
    const connection = new GatewayConnection(this, channel, () => this.connections.delete(connection), identity);
    this.connections.add(connection);
    return connection;
  }

  /**
   * The instructions a client is given: ours, then each backend's under its server's name,
   * so the model learns how the servers want to be used as it would from each directly.
   */
  async fullInstructions(): Promise<string> {
    if (this.options.instructions !== undefined) return this.instructions;
    const described = await this.manager.knownDescriptions(this.options.servers).catch(() => new Map<string, { instructions?: string }>());
    const parts = [this.instructions];
    for (const [server, { instructions }] of described) {
      const text = instructions?.trim();
      if (!text) continue;
      // A server may send kilobytes of it; one runaway server must not crowd out the others.
      const cut = text.length > MAX_BACKEND_INSTRUCTIONS ? `${text.slice(0, MAX_BACKEND_INSTRUCTIONS)}… (cut)` : text;
      parts.push(`## ${server}\n${cut}`);
    }
    return parts.join('\n\n');
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** @internal A session of the pool over the gateway's servers and tools, its questions going to `handlers`. */
  session(handlers: HostHandlers, identity?: Identity): ToolSession {
    const { servers, tools } = this.options;
    const session = this.manager.session({ ...(servers ? { servers } : {}), ...(tools ? { tools } : {}), handlers, ...(identity ? { principal: identity.principal } : {}) });
    return identity && this.access ? this.access.guard(session, identity) : session;
  }

  /** Closes every client connection (the manager is the caller's). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.manager.off('toolsChanged', this.onToolsChanged);
    this.rounds.close();
    await Promise.all([...this.connections].map((c) => c.close()));
  }

  /** A burst of backends' changes (a reload, several starts) becomes one notification per client. */
  private toolsChanged(): void {
    if (this.changePending || this.options.search) return;
    this.changePending = true;
    queueMicrotask(() => {
      this.changePending = false;
      for (const connection of this.connections) connection.toolsChanged();
    });
  }
}

/** One client of the gateway: the server half of MCP over its channel, and its session of the pool. */
export class GatewayConnection {
  readonly server: McpServerSession;
  private readonly session: ToolSession;
  /** Tool calls in flight, by the arguments object the pool names in a question's context: which request a question is about. */
  private readonly callsByArgs = new Map<object, RequestId>();

  constructor(
    private readonly gateway: Gateway,
    channel: Channel,
    onEnd: () => void,
    private readonly identity?: Identity,
  ) {
    const search = gateway.options.search === true;
    this.server = new McpServerSession(channel, {
      name: 'gateway client',
      serverInfo: gateway.serverInfo,
      capabilities: () => ({ tools: { listChanged: !search }, prompts: {}, resources: {}, completions: {} }),
      instructions: () => gateway.fullInstructions(),
      cacheTtlMs: CACHE_TTL_MS,
      listenable: () => (search ? {} : { toolsListChanged: true }),
    });
    // A backend's question about this client's call goes to this client, and to no other.
    this.session = gateway.session(askingHandlers(() => this.server.clientCapabilities, (method, request, ctx) => this.ask(method, request, ctx)), identity);
    this.server.onClose(() => {
      this.session.close();
      gateway.rounds.dropOwned(this);
      onEnd();
    });
    this.register();
  }

  /** Ends this client's connection and its session (its calls in flight are cancelled). Idempotent. */
  close(): Promise<void> {
    return this.server.close();
  }

  /** @internal Tells this client the tool list changed, in its era's way. */
  toolsChanged(): void {
    this.server.listChanged('toolsListChanged');
  }

  private register(): void {
    const server = this.server;
    server.handle('tools/list', () => this.listTools());
    server.handle('tools/call', (params, ctx) => this.callTool(params, ctx));
    server.handle('prompts/list', () => this.listPrompts());
    server.handle('prompts/get', (params, ctx) => this.getPrompt(params, ctx));
    server.handle('resources/list', () => this.listResources());
    server.handle('resources/templates/list', () => this.listTemplates());
    server.handle('resources/read', (params, ctx) => this.readResource(params, ctx));
    server.handle('completion/complete', (params, ctx) => complete(this.session, this.gateway.router, () => this.listTemplates(), params, ctx.signal));
  }

  /**
   * Asks this legacy client a backend's question it declared the capability for (see
   * askingHandlers). A 2026 client that declared one is asked through input_required
   * rounds: see withRounds.
   */
  private ask(method: string, request: object, ctx: HostRequestContext): Promise<unknown> {
    // On HTTP the question travels on the stream of the call it is about, when that is known.
    const about = ctx.toolCall ? this.callsByArgs.get(ctx.toolCall.arguments) : this.callsByArgs.size === 1 ? [...this.callsByArgs.values()][0] : undefined;
    // A person may be answering: no time-out of our own, the call's signal ends the wait.
    return this.server.ask(method, request, { signal: ctx.signal, timeout: ASK_TIMEOUT_MS, about });
  }

  private async listTools(): Promise<Record<string, unknown>> {
    if (this.gateway.options.search) return { tools: searchAndCallTools().map((t) => t.tool) };
    const tools = await this.session.listTools();
    return { tools: tools.map(({ name, tool }) => ({ ...tool, name })) };
  }

  private async callTool(params: Record<string, unknown>, ctx: IncomingRequestContext): Promise<Record<string, unknown>> {
    const { name, args: argsObject } = nameAndArguments('tools/call', 'tool', params);
    const onProgress = this.server.progressOf(params, ctx);
    const rounds = this.withRounds(`tools/call ${JSON.stringify(name)}`, params, ctx, onProgress, (session, options) => this.runTool(session, name, argsObject, options));
    if (rounds) return rounds;
    const inner = this.gateway.options.search ? argsObject.arguments : undefined;
    this.callsByArgs.set(argsObject, ctx.id);
    if (typeof inner === 'object' && inner !== null) this.callsByArgs.set(inner, ctx.id);
    try {
      return await this.runTool(this.session, name, argsObject, { signal: ctx.signal, ...(onProgress ? { onProgress } : {}) });
    } finally {
      this.callsByArgs.delete(argsObject);
      if (typeof inner === 'object' && inner !== null) this.callsByArgs.delete(inner);
    }
  }

  private async runTool(session: ToolSession, name: string, args: Record<string, unknown>, options: CallOptions): Promise<Record<string, unknown>> {
    if (this.gateway.options.search) {
      // The search answers from known tools only; a first search (no cache yet) must not find nothing,
      // so the tools get listed first: from the cache when it has them, else the servers start in parallel.
      if (name === SEARCH_TOOLS_NAME) await session.listTools();
      return runSearchAndCall(session, name, args, options);
    }
    return session.callTool(name, args, options);
  }

  /**
   * A 2026 client's tools/call, prompts/get or resources/read whose backend may ask it
   * something, when the client declared what may be asked (else undefined: served plainly).
   * The backend's questions become the gateway's own input_required rounds; a retry
   * carrying `requestState` takes up the same pending request.
   */
  private withRounds(
    label: string,
    params: Record<string, unknown>,
    ctx: IncomingRequestContext,
    onProgress: ((p: Progress) => void) | undefined,
    work: (session: ToolSession, options: CallOptions) => Promise<object>,
  ): Promise<Record<string, unknown>> | undefined {
    const meta = params._meta as Record<string, unknown> | undefined;
    if (meta?.[PROTOCOL_VERSION_META_KEY] !== MODERN_PROTOCOL_VERSION) return undefined;
    const rounds = this.gateway.rounds;
    if (params.requestState !== undefined) return rounds.round(rounds.resume(label, params), ctx.signal, onProgress);
    const declared = (meta[CLIENT_CAPABILITIES_META_KEY] ?? {}) as { elicitation?: unknown; sampling?: unknown };
    if (declared.elicitation === undefined && declared.sampling === undefined) return undefined;
    // A stateless HTTP round is a connection of its own: the request outlives it. Any other connection's end ends it.
    const call = new PendingCall(label, this.server.channel.info.singleRequest ? undefined : this);
    call.start((signal, progress) => this.inOwnSession(call, declared, (session) => work(session, { signal, onProgress: progress })));
    return rounds.round(call, ctx.signal, onProgress);
  }

  /**
   * Runs a 2026 client's request in a session of its own, so a backend's question reaches
   * this request (and it alone), and outliving this connection (a stateless round is one
   * HTTP request). Only what the client declared is asked.
   */
  private async inOwnSession(
    call: PendingCall,
    declared: { elicitation?: unknown; sampling?: unknown },
    work: (session: ToolSession) => Promise<object>,
  ): Promise<Record<string, unknown>> {
    const session = this.gateway.session(askingHandlers(() => declared, (method, request, ctx) => call.ask(method, request, ctx.signal)), this.identity);
    try {
      return (await work(session)) as Record<string, unknown>;
    } finally {
      session.close();
    }
  }

  private async listPrompts(): Promise<Record<string, unknown>> {
    const prompts = await this.session.listPrompts();
    return { prompts: prompts.map(({ name, prompt }) => ({ ...prompt, name })) };
  }

  private async getPrompt(params: Record<string, unknown>, ctx: IncomingRequestContext): Promise<Record<string, unknown>> {
    const { name, args } = nameAndArguments('prompts/get', 'prompt', params);
    const promptArgs = args as Record<string, string>;
    const rounds = this.withRounds(`prompts/get ${JSON.stringify(name)}`, params, ctx, undefined, (session, options) => session.getPrompt(name, promptArgs, options));
    return rounds ?? ((await this.session.getPrompt(name, promptArgs, { signal: ctx.signal })) as unknown as Record<string, unknown>);
  }

  /** Every server's resources; a URI two servers list is shown once per server, as `lazy-mcp:<server>/<uri>` (see resource-router.ts). */
  private async listResources(): Promise<Record<string, unknown>> {
    const resources = await this.session.listResources();
    return { resources: this.gateway.router.learnResources(resources) };
  }

  private async listTemplates(): Promise<Record<string, unknown>> {
    const templates = await this.session.listResourceTemplates();
    return { resourceTemplates: this.gateway.router.learnTemplates(templates) };
  }

  /** Reads from the server whose listing named the URI; a URI no listing named is looked for by listing first. */
  private async readResource(params: Record<string, unknown>, ctx: IncomingRequestContext): Promise<Record<string, unknown>> {
    const { uri } = params;
    if (typeof uri !== 'string') throw rpcFailure(INVALID_PARAMS, `resources/read needs a "uri" string, got ${JSON.stringify(uri) ?? 'nothing'}`);
    const router = this.gateway.router;
    let route = router.route(uri);
    if (route === undefined) {
      await Promise.all([this.listResources(), this.listTemplates()]);
      route = router.route(uri);
    }
    if (route === undefined) throw rpcFailure(RESOURCE_NOT_FOUND, `Resource not found: no server of this gateway lists ${JSON.stringify(uri)}`, { uri });
    if ('shared' in route) {
      const choices = route.shared.map((server) => serverUri(server, uri)).join(', ');
      throw rpcFailure(INVALID_PARAMS, `resources/read: servers ${route.shared.join(', ')} all list ${JSON.stringify(uri)}; read one of ${choices}`, { uri });
    }
    const { server, uri: own } = route;
    const shown = (result: Record<string, unknown>) => (own === uri ? result : asRequested(result, own, uri));
    const rounds = this.withRounds(`resources/read ${JSON.stringify(uri)}`, params, ctx, undefined, (session, options) => session.readResource(server, own, options));
    return rounds ? shown(await rounds) : shown((await this.session.readResource(server, own, { signal: ctx.signal })) as unknown as Record<string, unknown>);
  }
}

/** The `name` and `arguments` of a tools/call or prompts/get, checked; absent arguments are `{}`. */
function nameAndArguments(method: string, noun: string, params: Record<string, unknown>): { name: string; args: Record<string, unknown> } {
  const { name, arguments: args } = params;
  if (typeof name !== 'string') throw rpcFailure(INVALID_PARAMS, `${method} needs a ${noun} "name" string, got ${JSON.stringify(name) ?? 'nothing'}`);
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw rpcFailure(INVALID_PARAMS, `${method} "arguments" must be an object, got ${JSON.stringify(args)}`);
  }
  return { name, args: (args ?? {}) as Record<string, unknown> };
}

/** A read's result under the URI the client asked for: contents the server gave under its own URI say the gateway's. */
function asRequested(result: Record<string, unknown>, own: string, requested: string): Record<string, unknown> {
  const { contents } = result;
  if (!Array.isArray(contents)) return result;
  return { ...result, contents: contents.map((c: unknown) => (c !== null && typeof c === 'object' && (c as { uri?: unknown }).uri === own ? { ...c, uri: requested } : c)) };
}
