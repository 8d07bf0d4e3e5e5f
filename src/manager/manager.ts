import { EventEmitter } from 'node:events';
import { McpError, serverLabel } from '../errors.js';
import { callIsolated } from '../util/listeners.js';
import { DEFAULT_CLIENT_INFO } from '../protocol/client.js';
import type {
  CallOptions,
  CallToolResult,
  Completion,
  GetPromptResult,
  PromptRef,
  ReadResourceResult,
  ResourceTemplateRef,
} from '../protocol/types.js';
import { type SearchToolsOptions, ToolSearchIndex, type ToolSearchResult } from '../model/tool-search.js';
import { type LoginOptions, PoolAuth } from './auth/auth.js';
import { parseConfig, type ServerEntry } from './config/config.js';
import { inFile, readConfigFile } from './config/config-text.js';
import type { ReloadReport } from './config/config-diff.js';
import { type ConfigWatcher, watchConfigFile } from './config/config-watcher.js';
import type { ServerMetrics } from './telemetry/metrics.js';
import { HostRouter } from './scope/host-handlers.js';
import { assertOpen, enabledSlots, type PoolState, slotOf } from './scope/pool-state.js';
import { type CompleteOptions, type LogLevel, type ManagedResource, type ManagedResourceTemplate, Scope, type ServersOption } from './scope/scope.js';
import type { ManagedPrompt } from './catalog/prompt-index.js';
import type { ServerDescription } from './catalog/server-description.js';
import { Subscriptions } from './scope/subscriptions.js';
import type { ToolCallHost } from './call/tool-call.js';
import type { ServerStatus } from './pool/server-slot.js';
import type { ToolSession } from './scope/session.js';
import { OpenSessions, type SessionOptions } from './scope/open-sessions.js';
import { defaultStateDir } from '../util/state-dir.js';
import type { ToolCatalog } from './catalog/tool-catalog.js';
import { poolCatalog } from './pool-catalog.js';
import type { ManagedTool, ToolIndex } from './catalog/tool-index.js';
import { Tracing } from './telemetry/tracing.js';
import type { ClusterMember } from '../share/cluster/member.js';
import { clusterPlacement, type Placement, placementFor } from './pool/placement.js';
import type { ManagerEvents } from './events.js';
import type { SlotWiring } from './slot-wiring.js';
import { SlotTable } from './slot-table.js';
import { DEFAULT_SHUTDOWN_GRACE_MS } from '../transport/channel.js';
import { ClusterHooks, type ListChange } from './cluster-hooks.js';
import { checkOptions, type FileOptions, type ManagerOptions, watchDebounceMs } from './options.js';
import { InstancedSlot } from './principals/instanced-slot.js';
import { checkPrincipal, type Principal } from './principals/principal-scope.js';

export type { FileOptions, ManagerEvents, ManagerOptions };

/**
 * The pool: every configured stdio server, started on first need, shared by every
 * caller and session, and stopped on shutdown with nothing left behind.
 */
export class McpServerManager extends EventEmitter {
  private readonly table = new SlotTable();
  private readonly slots = this.table.slots;
  private readonly catalog: ToolCatalog;
  private readonly index: ToolIndex;
  /** The sessions not closed yet, for shutdown to close them. */
  private readonly sessions: OpenSessions;
  private readonly router: HostRouter;
  private readonly subscriptions: Subscriptions;
  /** What every scope works on. */
  private readonly pool: PoolState;
  /** The manager's own scope: all servers, the manager's handlers. */
  private readonly root: Scope;
  /** What every slot reports to and asks of the manager. */
  private readonly wiring: SlotWiring;
  private closing: Promise<void> | undefined;
  /** null until first asked: finding the OpenTelemetry API walks the file system, which construction must not pay. */
  private tracingLookup: Tracing | undefined | null = null;
  /** The last reload in line: reloads apply one at a time, in call order. */
  private reloading: Promise<unknown> = Promise.resolve();
  private watcher: ConfigWatcher | undefined;
  private readonly auth: PoolAuth;
  /** Where stdio servers run when not in this process (the pool daemon, the cluster). */
  private readonly placement: Placement;
  /** With `cluster`: this manager as a member (see {@link clusterMember}). */
  private readonly cluster: ClusterHooks | undefined;

  /** Builds a manager from a config object or JSON text. Spawns nothing (eager servers start in the background). */
  static fromConfig(config: unknown, options: ManagerOptions = {}): McpServerManager {
    return new McpServerManager(parseConfig(config), options);
  }

  /** Reads a config file (`mcpServers` or VS Code `servers` shape, JSON with comments); with `watch`, follows its changes. */
  static fromFile(path: string, options: ManagerOptions & FileOptions = {}): McpServerManager {
    const { watch, ...managerOptions } = options;
    const debounceMs = watchDebounceMs(watch);
    const file = readConfigFile(path);
    let manager: McpServerManager;
    try {
      manager = new McpServerManager(parseConfig(file.document, process.env, file.source), managerOptions);
    } catch (error) {
      throw inFile(path, error);
    }
    if (watch) manager.watcher = watchConfigFile(path, file.text, (parse) => manager.enqueue(parse), (error) => manager.emit('configError', { path, error }), debounceMs);
    return manager;
  }

  constructor(
    entries: ServerEntry[],
    private readonly options: ManagerOptions = {},
  ) {
    super();
    checkOptions(options);
    const manager = this;
    this.cluster = options.cluster
      ? new ClusterHooks(options.cluster, {
          get pool() {
            return manager.pool;
          },
          servers: () => this.table.stdioServers(),
          reload: (config) => this.reload(config),
          emit: (event, payload) => this.emit(event, payload),
        })
      : undefined;
    const cluster = this.cluster;
    this.placement = cluster ? clusterPlacement(() => cluster.join()) : placementFor(options.shared);
    const stores = cluster?.stores();
    this.auth = new PoolAuth(stores && !options.tokenStore ? { ...options, tokenStore: stores.tokens } : options);
    this.router = new HostRouter(options.handlers, options.capabilities, options.roots);
    this.catalog = poolCatalog(entries, options, {
      emit: (event, payload) => this.emit(event, payload),
      slot: (server) => this.slots.get(server),
      auth: this.auth,
      handlers: Object.keys(this.router.connectionHandlers()),
      ...(stores ? { store: stores.manifests } : {}),
    });
    this.index = this.catalog.index;
    const toolCalls: ToolCallHost = {
      index: this.index,
      invalidate: (server) => this.catalog.invalidate(server),
      stateDir: () => options.stateDir ?? defaultStateDir(),
    };
    this.subscriptions = new Subscriptions((server, work, onlyIfRunning) =>
      onlyIfRunning && slotOf(this.pool, server).state !== 'ready' ? Promise.resolve() : slotOf(this.pool, server).run(work),
    );
    this.pool = {
      slots: this.slots,
      catalog: this.catalog,
      search: new ToolSearchIndex<ManagedTool>(),
      router: this.router,
      subscriptions: this.subscriptions,
      toolCalls,
      maxResultBytes: options.maxResultBytes,
      get tracing() {
        return manager.tracing;
      },
      get closed() {
        return manager.closing !== undefined;
      },
      note: (server: string, data: string) => this.emit('log', { server, level: 'notice', logger: 'lazy-mcp', data }),
    };
    this.sessions = new OpenSessions(this.pool);
    this.root = new Scope(this.pool, undefined, undefined, this.router.root);
    this.wiring = {
      options,
      router: this.router,
      catalog: this.catalog,
      pool: this.pool,
      subscriptions: this.subscriptions,
      auth: this.auth,
      placement: this.placement,
      get tracing() {
        return manager.tracing;
      },
      emit: (event, payload) => this.emit(event, payload),
      ...(cluster ? { tellCluster: (event: ListChange) => cluster.tell(event) } : {}),
    };
    this.table.fill(this.wiring, entries);
    // After the constructor returns, so listeners attached right away see the events.
    queueMicrotask(() => this.table.startEager());
  }

  override on<E extends keyof ManagerEvents>(event: E, listener: (payload: ManagerEvents[E]) => void): this {
    return super.on(event, listener);
  }

  override once<E extends keyof ManagerEvents>(event: E, listener: (payload: ManagerEvents[E]) => void): this {
    return super.once(event, listener);
  }

  /** Calls every listener under the one listener policy: isolated, and reported once if it throws (see {@link callIsolated}). */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const listeners = this.rawListeners(event) as ((...a: unknown[]) => unknown)[];
    for (const listener of listeners) callIsolated('McpServerManager', String(event), listener, args, this);
    return listeners.length > 0;
  }

  override off<E extends keyof ManagerEvents>(event: E, listener: (payload: ManagerEvents[E]) => void): this {
    return super.off(event, listener);
  }

  /** Every tool of the enabled servers (or of `servers`), starting in parallel only those whose tools are unknown. */
  listTools(options: ServersOption = {}): Promise<ManagedTool[]> {
    return this.root.listTools(options);
  }

  /** See {@link Scope.searchTools}: answers from what is known; starts nothing; `embed` adds the host's embedding model. */
  searchTools(query: string, options: SearchToolsOptions = {}): Promise<ToolSearchResult> {
    return this.root.searchTools(query, options);
  }

  /**
   * @internal What the enabled servers (of `servers`, default all) said about themselves
   * at their last start or in their cache entries; starts nothing. For the gateway's instructions.
   */
  async knownDescriptions(servers?: readonly string[]): Promise<Map<string, ServerDescription>> {
    const out = new Map<string, ServerDescription>();
    const slots = enabledSlots(this.pool, servers ? new Set(servers) : undefined);
    const found = await Promise.all(slots.map((slot) => this.catalog.knownDescription(slot).catch(() => undefined)));
    slots.forEach((slot, i) => found[i] && out.set(slot.name, found[i]));
    return out;
  }

  /** Calls a tool by its public name; only the server that owns it is started. */
  callTool(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult> {
    return this.root.callTool(name, args, options);
  }

  /** Calls a tool by its server and its own name. */
  callServerTool(server: string, tool: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult> {
    return this.root.callServerTool(server, tool, args, options);
  }

  /** Resources of one server, or of every enabled server (started in parallel; failures left out). */
  listResources(server?: string): Promise<ManagedResource[]> {
    return this.root.listResources(server);
  }

  /** Resource templates of one server, or of every enabled server. */
  listResourceTemplates(server?: string): Promise<ManagedResourceTemplate[]> {
    return this.root.listResourceTemplates(server);
  }

  readResource(server: string, uri: string, options?: CallOptions): Promise<ReadResourceResult> {
    return this.root.readResource(server, uri, options);
  }

  /** Every prompt of the enabled servers under its public name, starting in parallel only those whose prompts are unknown. */
  listPrompts(options: ServersOption = {}): Promise<ManagedPrompt[]> {
    return this.root.listPrompts(options);
  }

  /** Gets a prompt by its public name; only the server that owns it is started. */
  getPrompt(name: string, args?: Record<string, string>, options?: CallOptions): Promise<GetPromptResult> {
    return this.root.getPrompt(name, args, options);
  }

  /** Completion of a prompt's or resource template's argument (`ref/prompt` takes the public or the server's own prompt name). */
  complete(server: string, ref: PromptRef | ResourceTemplateRef, argument: { name: string; value: string }, options?: CompleteOptions): Promise<Completion> {
    return this.root.complete(server, ref, argument, options);
  }

  /** See {@link Scope.subscribeResource}. */
  subscribeResource(server: string, uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    return this.root.subscribeResource(server, uri, onUpdated);
  }

  /** What the server says about itself; from the last start or the cache when known (nothing spawned), else it is started. */
  serverInfo(server: string): Promise<ServerDescription> {
    return this.root.serverInfo(server);
  }

  /** Sets a legacy server's log level (`logging/setLevel`); a no-op for 2026 servers, whose log level travels per request. */
  setLogLevel(server: string, level: LogLevel, options?: CallOptions): Promise<void> {
    return this.root.setLogLevel(server, level, options);
  }

  /** Each server's state, pid, restarts, last error and tool count. */
  status(): Record<string, ServerStatus> {
    // Null prototype: a server may be named `__proto__`.
    const out: Record<string, ServerStatus> = Object.create(null);
    for (const [name, slot] of this.slots) {
      const tools = this.index.toolsOf(name);
      const prompts = this.catalog.prompts.promptsOf(name);
      out[name] = { ...slot.status(), ...(tools ? { tools: tools.length } : {}), ...(prompts ? { prompts: prompts.length } : {}) };
    }
    return out;
  }

  /**
   * Each server's figures since it was configured: calls, errors by code, latency
   * quantiles, starts and restarts, bytes, requests in flight. Reading them costs nothing
   * on the call path.
   */
  metrics(): Record<string, ServerMetrics> {
    const out: Record<string, ServerMetrics> = Object.create(null);
    for (const name of this.slots.keys()) out[name] = this.table.recorder(name).snapshot();
    return out;
  }

  /**
   * Applies a new config (object or JSON text) by diff and resolves with what it did.
   * Unchanged servers keep their process, their calls and their sessions. A changed server
   * finishes its calls in flight on the old entry, then stops; it starts again with the
   * new entry on next use (never two processes of it at once). A removed server finishes
   * its calls and stops, and its tools leave the index. Added servers are `idle` (or start,
   * if `eager`); an invalid entry is `invalid` and touches nothing else. A config that is
   * not a config at all rejects with `invalid-config` and changes nothing. Reloads apply
   * one at a time, in call order. Emits `configChanged`.
   */
  reload(config: unknown): Promise<ReloadReport> {
    const report = this.enqueue(() => parseConfig(config));
    this.cluster?.reloaded(report, config);
    return report;
  }

  private enqueue(parse: () => ServerEntry[]): Promise<ReloadReport> {
    const next = this.reloading.then(() => this.table.apply(parse()));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  /**
   * A cheap view of the pool for one chat session, limited to `servers` (default: all) and
   * to the raw tool names `tools` lets through (on top of each server's own filter).
   */
  session(options: SessionOptions = {}): ToolSession {
    return this.sessions.open(options);
  }

  /**
   * Runs the OAuth authorization of a remote server now (see {@link LoginOptions}); a
   * server in `needs-auth` starts again on its next use.
   */
  async login(server: string, options?: LoginOptions & { principal?: Principal }): Promise<void> {
    this.assertOpen();
    const slot = slotOf(this.pool, server);
    const principal = checkPrincipal(options?.principal);
    if (principal && slot instanceof InstancedSlot) {
      // A server run per principal: this principal's tokens, kept apart from everyone's.
      await this.auth.login(server, slot.loginConfig(principal), options, principal.id);
    } else {
      if (principal) throw new McpError('invalid-arguments', `${serverLabel(server)}login's principal applies to a server run per principal ("perPrincipal" or \${principal:NAME} in its entry)`, { server });
      await this.auth.login(server, slot.entry.kind === 'http' ? slot.entry.config : undefined, options);
    }
    slot.authorized();
  }

  /**
   * Completes an authorization whose URL a principal's `auth-required` handed out, with the
   * redirect the host's own redirect URI (`oauth.redirectUri`) received: the tokens are
   * stored for that principal and server only. (With the default loopback redirect URI the
   * redirect completes it by itself.) Rejects `invalid-arguments` for a state no
   * authorization waits for, `auth-required` when the authorization server refuses the code.
   */
  async completeLogin(redirected: string | URL): Promise<void> {
    this.assertOpen();
    await this.auth.completeLogin(redirected);
  }

  /** Clears backoff or failure and starts the server again; rejects with the start error if it fails. */
  async restart(server: string): Promise<void> {
    this.assertOpen();
    await slotOf(this.pool, server).restart();
  }

  /**
   * Stops every server in parallel (stdin, SIGTERM, SIGKILL within `shutdownGraceMs`).
   * Idempotent, never throws; pending and later calls reject with `closed`.
   */
  shutdown(): Promise<void> {
    this.closing ??= (async () => {
      this.watcher?.close();
      this.auth.close();
      this.sessions.closeAll();
      const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
      await this.table.stop(grace);
      // Leaving the cluster stops the servers this member owns (peers re-place them at once).
      await this.cluster?.close();
      // Then the cache writes queued by now (a listing that landed during the stop among
      // them) get at most a second more, so a manager made next finds them.
      await this.catalog.flushed(Math.min(grace, 1000));
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  private assertOpen(): void {
    assertOpen(this.pool);
  }

  private get tracing(): Tracing | undefined {
    if (this.tracingLookup === null) this.tracingLookup = Tracing.load(DEFAULT_CLIENT_INFO.version);
    return this.tracingLookup;
  }

  /**
   * This manager as a member of its cluster (`cluster` option), joining on the first call:
   * Redis connected, the internal endpoint served, the heartbeat started. Undefined without
   * `cluster`. A gateway serving HTTP takes the member's endpoint and routing from here.
   */
  clusterMember(): Promise<ClusterMember> | undefined {
    return this.cluster?.join();
  }
}
