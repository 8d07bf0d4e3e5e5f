import { EventEmitter } from 'node:events';
import { shown } from '../util/check.js';
import { McpError, serverLabel } from '../errors.js';
import { callIsolated } from '../util/listeners.js';
import { DEFAULT_CLIENT_INFO } from '../protocol/client.js';
import type {
  CallOptions,
  CallToolResult,
  Completion,
  GetPromptResult,
  HostHandlers,
  PromptRef,
  ReadResourceResult,
  ResourceTemplateRef,
} from '../protocol/types.js';
import { type SearchToolsOptions, ToolSearchIndex, type ToolSearchResult } from '../model/tool-search.js';
import { type LoginOptions, PoolAuth } from './auth/auth.js';
import { parseConfig, type ServerEntry } from './config/config.js';
import { readConfigFile, workspaceFolderOf } from './config/config-text.js';
import { diffEntries, type ReloadReport } from './config/config-diff.js';
import { ConfigWatcher } from './config/config-watcher.js';
import { ManifestCache } from './catalog/manifest-cache.js';
import { MetricsRecorder, type ServerMetrics } from './telemetry/metrics.js';
import { handlersProblem, HostRouter } from './scope/host-handlers.js';
import { assertOpen, enabledSlots, narrow, type PoolState, slotOf } from './scope/pool-state.js';
import { type CompleteOptions, type LogLevel, type ManagedResource, type ManagedResourceTemplate, Scope, type ServersOption } from './scope/scope.js';
import type { ManagedPrompt } from './catalog/prompt-index.js';
import type { ServerDescription } from './catalog/server-description.js';
import { Subscriptions } from './scope/subscriptions.js';
import type { ToolCallHost } from './call/tool-call.js';
import { type ServerStatus, ServerSlot } from './pool/server-slot.js';
import { ToolSession } from './scope/session.js';
import { defaultStateDir } from '../util/state-dir.js';
import { ToolCatalog } from './catalog/tool-catalog.js';
import { type ToolFilter, type ToolPredicate, toolFilterProblem, toolPredicate } from './catalog/tool-filter.js';
import type { ManagedTool, ToolIndex } from './catalog/tool-index.js';
import { Tracing } from './telemetry/tracing.js';
import type { ClusterMember } from '../share/cluster/member.js';
import { clusterPlacement, type Placement, placementFor } from './pool/placement.js';
import type { ManagerEvents } from './events.js';
import { slotHost, type SlotWiring } from './slot-wiring.js';
import { ClusterHooks, type ListChange } from './cluster-hooks.js';
import { checkOptions, type FileOptions, type ManagerOptions } from './options.js';
import { InstancedSlot } from '../share/principals/instanced-slot.js';
import { instanceSlotHost, isInstanced } from '../share/principals/instance-host.js';
import { checkPrincipal, newScope, type Principal, scoped, sessionOf } from '../share/principals/principal-scope.js';

export type { FileOptions, ManagerEvents, ManagerOptions };

/**
 * The pool: every configured stdio server, started on first need, shared by every
 * caller and session, and stopped on shutdown with nothing left behind.
 */
export class McpServerManager extends EventEmitter {
  private readonly slots = new Map<string, ServerSlot>();
  private readonly catalog: ToolCatalog;
  private readonly index: ToolIndex;
  /**
   * The sessions not closed yet, for shutdown to close them: weakly, so a session its host
   * forgot without closing costs nothing once collected (20,000 of them held 48 MiB).
   */
  private readonly sessions = new Set<WeakRef<ToolSession>>();
  private readonly forgotten = new FinalizationRegistry<WeakRef<ToolSession>>((ref) => this.sessions.delete(ref));
  private readonly router: HostRouter;
  private readonly subscriptions: Subscriptions;
  /** What every scope works on. */
  private readonly pool: PoolState;
  /** The manager's own scope: all servers, the manager's handlers. */
  private readonly root: Scope;
  /** What every slot reports to and asks of the manager. */
  private readonly wiring: SlotWiring;
  private closing: Promise<void> | undefined;
  /** Per server name; a changed server keeps its figures across a reload, a removed one loses them. */
  private readonly recorders = new Map<string, MetricsRecorder>();
  /** null until first asked: finding the OpenTelemetry API walks the file system, which construction must not pay. */
  private tracingLookup: Tracing | undefined | null = null;
  /** Slots a reload took out of the pool that still finish their calls in flight. */
  private readonly retiring = new Set<ServerSlot>();
  /** Per server name, the drain of its last retired slot while it lasts: the next slot of that name starts after it. */
  private readonly drains = new Map<string, Promise<void>>();
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
    const debounceMs = typeof watch === 'object' ? watch.debounceMs : undefined;
    if (debounceMs !== undefined && !(typeof debounceMs === 'number' && debounceMs >= 0 && Number.isFinite(debounceMs))) {
      throw new McpError('invalid-config', `fromFile option watch.debounceMs must be a non-negative number of milliseconds, got ${shown(debounceMs)}`, {
        phase: 'config',
      });
    }
    const file = readConfigFile(path);
    let manager: McpServerManager;
    try {
      manager = new McpServerManager(parseConfig(file.document, process.env, file.source), managerOptions);
    } catch (error) {
      throw inFile(path, error);
    }
    if (watch) manager.watchFile(path, file.text, debounceMs);
    return manager;
  }

  private watchFile(path: string, text: string, debounceMs: number | undefined): void {
    this.watcher = new ConfigWatcher(
      path,
      text,
      // `${workspaceFolder}` stays the file's workspace on every reload.
      (next) => this.enqueue(() => parseConfig(next, process.env, { workspaceFolder: workspaceFolderOf(path) })).catch((error: unknown) => Promise.reject(inFile(path, error))),
      (error) => {
        const reported =
          error instanceof McpError
            ? error
            : new McpError('invalid-config', `cannot read config file ${path}: ${(error as Error).message}`, { phase: 'config', cause: error });
        this.emit('configError', { path, error: reported });
      },
      debounceMs,
    );
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
          servers: () =>
            [...this.slots.values()].flatMap((slot) => (slot.entry.kind === 'stdio' ? [{ name: slot.name, config: slot.entry.config, options: slotHost(this.wiring, slot.entry, () => true, this.recorder(slot.name)).connectOptions(slot.name) }] : [])),
          reload: (config) => this.reload(config),
          emit: (event, payload) => this.emit(event, payload),
        })
      : undefined;
    const cluster = this.cluster;
    this.placement = cluster ? clusterPlacement(() => cluster.join()) : placementFor(options.shared);
    const stores = cluster?.stores();
    this.auth = new PoolAuth(stores && !options.tokenStore ? { ...options, tokenStore: stores.tokens } : options);
    this.router = new HostRouter(options.handlers, options.capabilities, options.roots);
    const filters = filtersOf(entries);
    this.catalog = new ToolCatalog(
      entries.map((entry) => entry.name),
      options.cacheDir,
      (server, message, error) =>
        this.emit('log', { server, level: 'warning', logger: 'cache', data: error ? `${message}: ${(error as Error).message ?? error}` : message }),
      (server) => this.emit('toolsChanged', { server }),
      filters,
      (server, message) => this.emit('log', { server, level: 'warning', logger: 'tools', data: message }),
      {
        cacheHints: options.cacheHints,
        contextOf: async (server) => {
          const slot = this.slots.get(server);
          // A list the server marks private serves only the principal (or session) it was made for.
          if (slot instanceof InstancedSlot) return slot.context();
          const entry = slot?.entry;
          return (entry?.kind === 'http' && (await this.auth.providerFor(server, entry.config)?.context())) || '';
        },
        onStale: (server, listing, error) =>
          this.emit('log', { server, level: 'warning', logger: 'cache', data: `serving the stale ${listing} list: listing again failed: ${(error as Error).message ?? error}` }),
        handshake: ManifestCache.handshakeKey(options.clientInfo ?? DEFAULT_CLIENT_INFO, Object.keys(this.router.connectionHandlers())),
        ...(stores ? { store: stores.manifests } : {}),
      },
    );
    this.index = this.catalog.index;
    const toolCalls: ToolCallHost = {
      index: this.index,
      invalidate: (server) => this.catalog.invalidate(server),
      stateDir: () => options.stateDir ?? defaultStateDir(),
    };
    this.catalog.onPromptsChanged = (server) => this.emit('promptsChanged', { server });
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
    for (const entry of entries) this.slots.set(entry.name, this.newSlot(entry));
    // After the constructor returns, so listeners attached right away see the events.
    queueMicrotask(() => this.startEager([...this.slots.values()]));
  }

  private startEager(slots: readonly ServerSlot[]): void {
    for (const slot of slots) {
      if ((slot.entry.kind === 'stdio' || slot.entry.kind === 'http') && slot.entry.config.startup === 'eager') slot.ready().catch(() => undefined);
    }
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
    for (const name of this.slots.keys()) out[name] = this.recorder(name).snapshot();
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
    const next = this.reloading.then(() => this.apply(parse()));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  /**
   * A cheap view of the pool for one chat session, limited to `servers` (default: all) and
   * to the raw tool names `tools` lets through (on top of each server's own filter).
   */
  session(options: { servers?: string[]; tools?: ToolFilter; handlers?: HostHandlers; principal?: Principal } = {}): ToolSession {
    this.assertOpen();
    const principal = checkPrincipal(options.principal);
    const problem = options.tools === undefined ? undefined : toolFilterProblem(options.tools);
    if (problem) throw new McpError('invalid-arguments', `session option ${problem.field} ${problem.message}`, {});
    const handlersWrong = handlersProblem(options.handlers, 'session option');
    if (handlersWrong) throw new McpError('invalid-arguments', handlersWrong, {});
    const filter = toolPredicate(options.tools);
    // Principals: a session gets a scope (its own caller, its principal) when it names a principal or some server runs per session.
    const instanced = principal !== undefined || [...this.slots.values()].some((slot) => slot instanceof InstancedSlot);
    const scope = instanced || options.handlers ? newScope(principal) : undefined;
    const caller = scope ? sessionOf(this.router.caller(options.handlers), scope) : this.router.caller(options.handlers);
    let ref: WeakRef<ToolSession> | undefined;
    const session = new ToolSession(this.pool, narrow(this.pool, undefined, options.servers), filter, caller, () => this.sessionClosed(ref!), scope?.session);
    ref = new WeakRef(session);
    this.sessions.add(ref);
    this.forgotten.register(session, ref, ref);
    // Its work runs in its principal's (or its own) scope, which servers run per principal or per session read.
    return scope && instanced ? scoped(session, scope) : session;
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
      for (const ref of [...this.sessions]) ref.deref()?.close();
      const grace = this.options.shutdownGraceMs ?? 2000;
      const slots = [...this.slots.values(), ...this.retiring];
      await Promise.all(slots.map((slot) => slot.stop('closed', grace).catch(() => undefined)));
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

  // --- the work behind the public methods and sessions; `view` limits the servers ---

  /** One reload's work, done at once so no call sees half of it. */
  private apply(entries: ServerEntry[]): ReloadReport {
    this.assertOpen();
    const report = diffEntries(new Map([...this.slots].map(([name, slot]) => [name, slot.entry])), entries);
    const before = new Map(this.slots);
    const grace = this.options.shutdownGraceMs ?? 2000;
    const retired: ServerSlot[] = [];
    for (const name of [...report.removed, ...report.changed]) {
      const old = before.get(name) as ServerSlot;
      retired.push(old);
      this.retiring.add(old);
      const drain: Promise<void> = old.drain(grace).finally(() => {
        this.retiring.delete(old);
        if (this.drains.get(name) === drain) this.drains.delete(name);
      });
      this.drains.set(name, drain);
    }
    for (const name of report.removed) this.recorders.delete(name);
    const added: ServerSlot[] = [];
    const unchanged = new Set(report.unchanged);
    this.slots.clear();
    for (const entry of entries) {
      const kept = unchanged.has(entry.name) ? before.get(entry.name) : undefined;
      // A server removed earlier and added back may still be draining: its slot follows that drain too.
      const slot = kept ?? this.newSlot(entry, this.drains.get(entry.name));
      if (!kept) added.push(slot);
      this.slots.set(entry.name, slot);
    }
    const hadTools = retired.filter((slot) => this.index.toolsOf(slot.name) !== undefined).map((slot) => slot.name);
    const hadPrompts = retired.filter((slot) => this.catalog.prompts.promptsOf(slot.name) !== undefined).map((slot) => slot.name);
    const renamed = this.catalog.reconfigure([...this.slots.keys()], filtersOf(entries), retired);
    hadTools.push(...renamed.tools);
    hadPrompts.push(...renamed.prompts);
    for (const name of report.removed) this.pool.search.update(name, undefined);
    for (const name of report.changed) {
      const from = (before.get(name) as ServerSlot).state;
      const to = (this.slots.get(name) as ServerSlot).state;
      if (from !== to) this.emit('stateChange', { server: name, from, to });
    }
    for (const server of hadTools) this.emit('toolsChanged', { server });
    for (const server of hadPrompts) this.emit('promptsChanged', { server });
    this.emit('configChanged', report);
    this.startEager(added);
    return report;
  }

  /** A slot for `entry` that reports its state to the manager only while it is the pool's slot for that server. */
  private newSlot(entry: ServerEntry, predecessor?: Promise<void>): ServerSlot {
    let slot: ServerSlot | undefined;
    const current = () => slot !== undefined && this.slots.get(entry.name) === slot;
    const host = slotHost(this.wiring, entry, current, this.recorder(entry.name), predecessor);
    slot = isInstanced(entry)
      ? new InstancedSlot(entry as Extract<ServerEntry, { kind: 'stdio' | 'http' }>, host, {
          make: (instance, redact, principal) =>
            new ServerSlot(
              instance,
              instanceSlotHost(
                slotHost(this.wiring, instance, current, this.recorder(entry.name)),
                redact,
                instance.kind === 'http' ? () => this.auth.providerFor(entry.name, instance.config, principal) : undefined,
              ),
            ),
          credentials: this.options.credentials,
          graceMs: this.options.shutdownGraceMs,
        })
      : new ServerSlot(entry, host);
    return slot;
  }

  private recorder(server: string): MetricsRecorder {
    let recorder = this.recorders.get(server);
    if (!recorder) this.recorders.set(server, (recorder = new MetricsRecorder()));
    return recorder;
  }

  private assertOpen(): void {
    assertOpen(this.pool);
  }

  private sessionClosed(ref: WeakRef<ToolSession>): void {
    this.sessions.delete(ref);
    this.forgotten.unregister(ref);
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

/** A config error, named after the file it is in. */
function inFile(path: string, error: unknown): unknown {
  if (!(error instanceof McpError) || error.code !== 'invalid-config') return error;
  return new McpError(error.code, `${path}: ${error.message}`, { phase: 'config', cause: error.cause });
}

function filtersOf(entries: readonly ServerEntry[]): Map<string, ToolPredicate | undefined> {
  return new Map(entries.map((e) => [e.name, toolPredicate('config' in e ? e.config.tools : undefined)] as const));
}

