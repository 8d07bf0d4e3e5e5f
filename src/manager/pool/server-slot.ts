import { performance } from 'node:perf_hooks';
import { withinTime } from '../../util/deadline.js';
import { McpError, serverLabel } from '../../errors.js';
import { type ConnectOptions, McpClient } from '../../protocol/client.js';
import { type RequestFinish, refused } from '../../protocol/engine/pending-requests.js';
import type { CallOptions, HostHandlers, Tool } from '../../protocol/types.js';
import type { Channel } from '../../transport/channel.js';
import type { OAuthProvider } from '../../transport/http/oauth/oauth-provider.js';
import { sandboxToolName } from '../../transport/stdio/sandbox/tool.js';
import { CallBudget } from '../call/call-budget.js';
import type { ResolvedServer, ServerEntry } from '../config/config.js';
import { FAILED_PROBES_TO_RESTART, HealthMonitor } from './health.js';
import { withDownloadHint, withSandboxHint } from '../config/runner-hint.js';
import type { MetricsRecorder } from '../telemetry/metrics.js';
import { TOOL_ERROR, type TraceHandle, type Tracing } from '../telemetry/tracing.js';
import { openRemoteChannel } from './remote-channel.js';
import { backoffDelay, eraOf, MAX_FAILED_STARTS, type ServerState, type ServerStatus } from './slot-state.js';

export { BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_FAILED_STARTS, type ServerState, type ServerStatus } from './slot-state.js';

/** What a slot needs from its manager: shared options and where to report. */
export interface SlotHost {
  connectOptions(server: string): ConnectOptions;
  stateChanged(server: string, from: ServerState, to: ServerState): void;
  /** A start listed these tools from the live server. */
  toolsListed(server: string, client: McpClient, tools: Tool[]): Promise<void>;
  /**
   * Whether the tools known of this server (an earlier connection's, or the cache's, for
   * the same server version and era) may stand until the live listing lands: the start is
   * then ready after the handshake, and lists beside the calls that woke it.
   */
  knowsTools(server: string, client: McpClient): boolean;
  /** The live listing of a start that was ready on known tools failed; they stay. */
  relistFailed(server: string, error: unknown): void;
  /** A start's connection is ready: what was made on the last one (subscriptions) is made again. */
  connected(server: string, client: McpClient): void;
  /** Where the server's calls and starts are counted; it outlives the slot across reloads. */
  readonly metrics: MetricsRecorder;
  /** Spans for starts and requests, when `@opentelemetry/api` is installed. */
  readonly tracing?: Tracing;
  /** The slot this one replaced in a reload: no start begins before it has shut down, so two processes of a server never overlap. */
  readonly predecessor?: Promise<void>;
  /** The OAuth provider of a remote server with `oauth`; undefined for the others. */
  auth?(server: string): OAuthProvider | undefined;
  /** With a shared pool: a stdio server's channel through the pool daemon, where the slot would spawn it. */
  share?(server: string, config: ResolvedServer, options: ConnectOptions, signal: AbortSignal): Promise<Channel>;
}

/**
 * One request as a slot runs it: how it is sent on a ready client, and what its caller
 * gets from the outcome once the slot has counted it. `waited`: the request waited for
 * a start (which may have listed the server's tools again).
 */
export interface SlotRequest<T, R = T> {
  /**
   * `finish`: given when {@link handsOn} is set, for the request to hand to the client
   * (`RequestOptions.finish`); the promise `send` returns is then the caller's.
   */
  send(client: McpClient, touch: () => void, options: CallOptions, waited: boolean, finish?: RequestFinish): Promise<T>;
  /** `send` hands the slot's `finish` on: the slot adds no promise layer of its own. */
  readonly handsOn?: boolean;
  /** Who makes the request: a question the server asks while the request waits for its start may be for them. */
  readonly caller?: object;
  readonly handlers?: HostHandlers;
  readonly toolCall?: { name: string; arguments: object };
  /** Checks an answer before it counts as a success; a throw fails the request. */
  check?(result: T): void;
  /** The caller's result from the server's. Default: as it came. */
  done?(result: T): R | Promise<R>;
  /** The caller's outcome from a failure. Default: the error. */
  failed?(error: unknown): R | Promise<R>;
}

type Send<T> = SlotRequest<T>['send'];

/** What a request is, for its span: the method and the tool (or other target) it names. */
export interface RequestLabel {
  method: string;
  target?: string;
  resourceUri?: string;
}

/**
 * The one thing a slot is doing, if anything: a start (callers share it), a restart
 * (stop then start; callers and other restarts share it), a stop, or the shutdown.
 * Shutdown aborts a start or restart in flight and waits for it, so no process it
 * spawned outlives the shutdown.
 */
interface Operation {
  readonly kind: 'start' | 'restart' | 'stop' | 'shutdown';
  /** Settles once the operation is over and no longer the slot's: a start's client, a restart's start error. */
  readonly done: Promise<unknown>;
  readonly abort: AbortController;
}

/** Why the slot closed a connection itself; calls in flight on it are told accordingly. */
type Retired = 'restart' | 'idle' | 'shutdown';

/**
 * One configured server as a state machine (see {@link ServerState}): its client while
 * `ready`, at most one operation in flight, backoff after failed starts, health probes
 * and idle stop. The slot is the only owner of its client and its process, and never
 * runs two processes of its server at once.
 */
export class ServerSlot {
  private current: ServerState;
  /** Set exactly while `ready`. */
  private client: McpClient | undefined;
  private op: Operation | undefined;
  private closing: Promise<void> | undefined;
  private readonly retired = new WeakMap<McpClient, Retired>();
  private failures = 0;
  private retryAt = 0;
  private active = 0;
  /** The start in flight has written nothing to stderr yet: a time-out then may be a package runner downloading. */
  private startSilent = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private health: HealthMonitor | undefined;
  /** The live listing of a start that was ready on known tools, until it lands; never rejects. */
  private relisting: Promise<void> | undefined;
  /** Requests waiting for a start, whose callers count for the questions the server asks meanwhile. */
  private readonly waiting = new Set<SlotRequest<unknown, unknown>>();
  /** Sends that listing, while it waits for the first answer on the connection. */
  private relistNow: (() => void) | undefined;
  /** Set while {@link drain} waits for the calls in flight to end. */
  private onIdle: (() => void) | undefined;
  lastError: McpError | undefined;
  /** Progress on a request is activity too: restarts the idle timer (one function for every call). */
  private readonly touch = (): void => void this.idleTimer?.refresh();

  constructor(
    readonly entry: ServerEntry,
    private readonly host: SlotHost,
  ) {
    this.current = entry.kind === 'stdio' || entry.kind === 'http' ? 'idle' : entry.kind;
    if (entry.kind === 'invalid' || entry.kind === 'unsupported') this.lastError = entry.error;
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ServerState {
    return this.current;
  }

  /** Enabled stdio and remote servers take part in listings; the rest are only reported. */
  get enabled(): boolean {
    return this.entry.kind === 'stdio' || this.entry.kind === 'http';
  }

  /** Whether progress on a request counts as activity for idle stop: a stdio server with `idleTimeout`. */
  get stopsWhenIdle(): boolean {
    return this.entry.kind === 'stdio' && this.entry.config.idleTimeout !== undefined;
  }

  /** Whether calls now fail fast: `failed`, or `backoff` before its wait is over. */
  get coolingDown(): boolean {
    return this.current === 'failed' || (this.current === 'backoff' && performance.now() < this.retryAt);
  }

  status(): ServerStatus {
    const client = this.client;
    const remote = 'config' in this.entry && 'url' in this.entry.config ? this.entry.config : undefined;
    const sandbox = 'config' in this.entry && 'sandbox' in this.entry.config ? this.entry.config.sandbox : undefined;
    return {
      state: this.current,
      transport: remote?.transport ?? 'stdio',
      ...(remote ? { url: remote.shownUrl } : {}),
      ...(sandbox ? { sandbox: { tool: sandboxToolName(), ...sandbox, read: [...sandbox.read], write: [...sandbox.write], env: [...sandbox.env] } } : {}),
      ...(client?.isOpen ? { ...(Number.isNaN(client.pid) ? {} : { pid: client.pid }), protocolVersion: client.protocolVersion, era: eraOf(client.protocolVersion) } : {}),
      restarts: this.host.metrics.restarts,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** The running client, starting the server first if it must (once, however many callers). */
  async ready(): Promise<McpClient> {
    for (;;) {
      if (this.current === 'closed') throw this.closedError();
      const op = this.op;
      if (op?.kind === 'start') return op.done as Promise<McpClient>;
      if (op) {
        // A restart's failed start is this caller's error too; after a stop, start afresh.
        await op.done;
        continue;
      }
      if (this.client) return this.client;
      switch (this.current) {
        case 'invalid':
        case 'unsupported':
          throw (this.entry as { error?: McpError }).error ?? this.lastError;
        case 'disabled':
          throw new McpError('unavailable', `${serverLabel(this.name)}the server is disabled in the config`, { server: this.name });
        case 'failed':
          throw this.unavailableError();
        case 'needs-auth':
          // Never authorized in the background; tokens stored since (a login elsewhere) are used.
          if (!(await this.host.auth?.(this.name)?.hasTokens())) throw this.lastError;
          this.authorized();
          continue;
        case 'backoff':
          if (performance.now() < this.retryAt) throw this.unavailableError();
      }
      return this.begin('start', (signal) => this.startOnce(signal));
    }
  }

  /**
   * Runs one request against the server, counting it as activity for idle stop. The
   * call's `timeout` and `maxTotalTimeout` (in `options`) cover the wait for a start too;
   * the request is sent with the options counting from the call's start (`startedAt`),
   * and `touch` to call on progress, which is activity too.
   */
  run<T, R = T>(request: SlotRequest<T, R> | Send<T>, options: CallOptions = {}, label?: RequestLabel): Promise<R> {
    const began = this.host.metrics.begin();
    // A caller waiting for a start counts as activity too: a drain (reload) must not pull the server from under it.
    this.active++;
    clearTimeout(this.idleTimer);
    const call: SlotRequest<T, R> = typeof request === 'function' ? { send: request } : request;
    const client = this.client;
    // No async frame on the way to a running server: each would cost every call a promise and more microtask turns.
    return client ? this.send(client, call, options, label, began, false) : this.sendAfterStart(call, options, label, began);
  }

  private async sendAfterStart<T, R>(request: SlotRequest<T, R>, options: CallOptions, label: RequestLabel | undefined, began: number): Promise<R> {
    let client: McpClient;
    let left: CallOptions;
    this.waiting.add(request);
    try {
      const budget = new CallBudget(options);
      // Aborting or running out of time stops this caller's wait for a start, not the start others share.
      client = await budget.wait(this.ready(), 'waiting for the server to start', this.name).catch((error: unknown) => {
        throw this.current === 'starting' ? this.hinted(error, this.startSilent) : error;
      });
      left = budget.rest();
    } catch (error) {
      const reported = this.requestFailed(undefined, error, began, undefined);
      if (request.failed) return request.failed(reported);
      throw reported;
    } finally {
      this.waiting.delete(request);
    }
    return this.send(client, request, left, label, began, true);
  }

  /** Sends `request` on a ready client; the slot's counters settle with its answer, then the caller's outcome is made. */
  private send<T, R>(client: McpClient, request: SlotRequest<T, R>, options: CallOptions, label: RequestLabel | undefined, began: number, waited: boolean): Promise<R> {
    const span = label ? this.requestSpan(client, label, began) : undefined;
    const settle = new SlotSettle(this, request, client, began, span);
    let answer: Promise<T>;
    try {
      answer = request.send(client, this.touch, options, waited, request.handsOn ? settle : undefined);
    } catch (error) {
      return refused<R>(error, settle);
    }
    if (request.handsOn) return answer as unknown as Promise<R>;
    return answer.then(
      (result) => settle.done(result),
      (error: unknown) => settle.failed(error),
    );
  }

  /**
   * The span of a request from its sending on (a start it waited for has its own), when a
   * tracer listens. A tracer that throws costs the request its span, never the request. No
   * object spread here: on Node 20 `{ ...label, more }` takes V8's slow path (~1 µs a property).
   */
  private requestSpan(client: McpClient, label: RequestLabel, began: number): TraceHandle | undefined {
    const tracing = this.host.tracing;
    if (!tracing) return undefined;
    try {
      if (!tracing.listened(began)) return undefined;
      return tracing.request({
        method: label.method,
        target: label.target,
        resourceUri: label.resourceUri,
        server: this.name,
        transport: client.transport,
        protocolVersion: client.protocolVersion,
      });
    } catch {
      return undefined;
    }
  }

  /** Counts a request that succeeded. */
  requestSucceeded(began: number, span: TraceHandle | undefined, result: unknown): void {
    try {
      this.host.metrics.end(began);
      span?.end((result as { isError?: unknown } | undefined)?.isError === true ? TOOL_ERROR : undefined);
    } catch {
      // A tracer's failure must not keep the request counted as in flight.
    } finally {
      this.requestEnded();
    }
  }

  /** Counts a failed request and gives the error its caller gets. */
  requestFailed(client: McpClient | undefined, error: unknown, began: number, span: TraceHandle | undefined): unknown {
    if (client && lostAuthorization(error) && this.client === client && !this.op) this.lostAuth(client, error as McpError);
    const reported = client ? this.fromOldConnection(client, error) : error;
    const failure = reported instanceof McpError ? reported : undefined;
    try {
      this.host.metrics.end(began, failure?.code ?? 'protocol-error');
      span?.end(failure);
    } catch {
      // As in requestSucceeded.
    } finally {
      this.requestEnded();
    }
    return reported;
  }

  private requestEnded(): void {
    this.relistSoon();
    this.active--;
    this.armIdle();
    if (this.active === 0) this.onIdle?.();
  }

  /**
   * A reload took this slot out of the pool: once the calls in flight on it (and a start
   * they wait for) are over, it shuts down. Later calls never reach it: the manager routes
   * them to its successor. Never throws.
   */
  async drain(graceMs?: number): Promise<void> {
    // A slot on its way out probes no more: a health restart would only start the old entry again.
    this.health?.close();
    this.health = undefined;
    for (;;) {
      const op = this.op;
      if (op && op.kind !== 'shutdown') await op.done.catch(() => undefined);
      else if (this.active > 0) await new Promise<void>((resolve) => (this.onIdle = resolve));
      else break;
    }
    this.onIdle = undefined;
    return this.shutdown(graceMs);
  }

  /**
   * Stops the server if it runs and starts it again, clearing backoff or failure; rejects
   * with the start error if that fails. Single flight: a restart or start in flight is
   * joined, not doubled.
   */
  async restart(): Promise<void> {
    for (;;) {
      if (this.current === 'closed') throw this.closedError();
      if (!this.enabled) {
        await this.ready(); // throws why it cannot run
        return;
      }
      const op = this.op;
      if (op?.kind === 'restart') return op.done as Promise<void>;
      if (op?.kind === 'start') {
        // A fresh process is on its way already; restart only clears the failure count.
        this.failures = 0;
        await op.done;
        return;
      }
      if (op) {
        await op.done;
        continue;
      }
      return this.begin('restart', (signal) => this.stopThenStart(signal));
    }
  }

  /**
   * `closed`: the shutdown (see {@link shutdown}). `stopped`: once the operation in flight
   * is over, stops the running server, if any.
   */
  async stop(to: 'stopped' | 'closed', graceMs?: number): Promise<void> {
    if (to === 'closed') return this.shutdown(graceMs);
    for (;;) {
      if (this.current === 'closed') return;
      const op = this.op;
      if (op) {
        await op.done.catch(() => undefined);
        continue;
      }
      const client = this.client;
      if (!client) return;
      return this.begin('stop', () => this.retire(client, 'idle', graceMs)) as Promise<void>;
    }
  }

  /**
   * Ends the slot for good: a start or restart in flight is aborted and waited for, the
   * running server is closed, and the state is `closed`. Idempotent; never throws.
   */
  shutdown(graceMs?: number): Promise<void> {
    this.closing ??= (async () => {
      const before = this.op;
      this.setState('closed');
      before?.abort.abort();
      const client = this.client;
      await this.begin('shutdown', async () => {
        // A listing on its way lands first (within the grace), so the cache learns what it says.
        if (this.relisting) await withinTime(this.listed, Math.min(graceMs ?? RELIST_GRACE_MS, RELIST_GRACE_MS));
        await Promise.all([client && this.retire(client, 'shutdown', graceMs), before?.done.catch(() => undefined)]);
      });
    })();
    return this.closing;
  }

  /** Makes `work` the slot's one operation; it stops being so just before its promise settles. */
  private begin<T>(kind: Operation['kind'], work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    let settle!: { resolve: (value: T) => void; reject: (error: unknown) => void };
    const done = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
    const op: Operation = { kind, done, abort };
    this.op = op;
    const finish = () => {
      if (this.op === op) this.op = undefined;
    };
    work(abort.signal).then(
      (value) => (finish(), settle.resolve(value)),
      (error: unknown) => (finish(), settle.reject(error)),
    );
    return done;
  }

  private async stopThenStart(signal: AbortSignal): Promise<void> {
    this.failures = 0;
    const client = this.client;
    if (client) await this.retire(client, 'restart');
    await this.startOnce(signal);
  }

  /** One attempt to start: spawn, handshake, list tools. Only a shutdown aborts it. */
  private async startOnce(signal: AbortSignal): Promise<McpClient> {
    if (signal.aborted) throw this.closedError();
    this.setState('starting');
    let channel: Channel | undefined;
    let client: McpClient | undefined;
    let began = 0;
    let span: TraceHandle | undefined;
    let early = false;
    try {
      await this.host.predecessor;
      if (signal.aborted) throw this.closedError();
      // Timed from here: the wait for the predecessor to finish its calls is not this start's.
      began = performance.now();
      span = this.host.tracing?.start(this.name, this.entry.kind === 'http' ? this.entry.config.transport : 'stdio');
      // The slot opens the channel itself so that an aborted start is over only once the channel is.
      channel = await this.openChannel(signal);
      if (signal.aborted) throw this.closedError();
      const options = this.host.connectOptions(this.name);
      const stderr = options.listeners?.stderr;
      this.startSilent = true;
      const listeners = { ...options.listeners, stderr: (line: string) => ((this.startSilent = false), stderr?.(line)) };
      const timeout = (this.entry as Extract<ServerEntry, { kind: 'stdio' }>).config.timeout ?? options.timeout;
      client = await McpClient.over(channel, { ...options, listeners, timeout, signal, waiting: () => this.waiting });
      if (signal.aborted) throw this.closedError();
      const live = client;
      // Until the start settles, a shutdown must also end the listing.
      const onAbort = () => void live.close();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        early = client.capabilities.tools !== undefined && this.host.knowsTools(this.name, client);
        if (!early) {
          const tools = client.capabilities.tools ? await client.listTools() : [];
          if (signal.aborted) throw this.closedError();
          await this.host.toolsListed(this.name, client, tools);
          if (signal.aborted) throw this.closedError();
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      // The server may have gone during the listing (a prompts/list it died on is no start
      // failure by itself): its close fired before the slot watches, so it is a failed start now.
      if (!client.isOpen) throw client.closedReason ?? this.closedError();
    } catch (error) {
      await client?.close();
      await channel?.close();
      span?.end(error instanceof McpError ? error : undefined);
      if (signal.aborted) throw this.closedError();
      const told = this.hinted(error, this.startSilent);
      this.failed(told as McpError);
      throw told;
    }
    span?.end();
    this.host.metrics.started(performance.now() - began);
    this.failures = 0;
    this.lastError = undefined;
    this.client = client;
    this.host.metrics.connected(client.traffic);
    this.watch(client);
    this.host.connected(this.name, client);
    if (early) this.relistBeside(client);
    this.setState('ready');
    this.armIdle();
    this.watchHealth(client);
    return client;
  }

  /**
   * Lists the tools of a start that was ready on known ones. With requests waiting for the
   * start, once the first of them has its answer (or someone waits for the listing): sent
   * beside them, the listing's answer came in the same read and was parsed before theirs.
   */
  private relistBeside(client: McpClient): void {
    const waited = this.active > 0;
    const listing: Promise<void> = new Promise<void>((resolve) => {
      if (waited) this.relistNow = resolve;
      else setImmediate(resolve);
    })
      .then(() => client.listTools())
      .then(
        (tools) => (this.client === client ? this.host.toolsListed(this.name, client, tools) : undefined),
        (error: unknown) => {
          if (this.client === client && client.isOpen) this.host.relistFailed(this.name, error);
        },
      )
      .catch(() => undefined)
      .finally(() => {
        if (this.relisting === listing) this.relisting = undefined;
      });
    this.relisting = listing;
  }

  /** Settles once the live listing of a start ready on known tools has landed (at once if none is due); sends it if not yet sent. Never rejects. */
  get listed(): Promise<void> {
    this.relistSoon();
    return this.relisting ?? Promise.resolve();
  }

  /** Sends the listing a start ready on known tools owes, if it has not gone out yet. */
  private relistSoon(): void {
    const send = this.relistNow;
    this.relistNow = undefined;
    send?.();
  }

  private async openChannel(signal: AbortSignal): Promise<Channel> {
    const { maxMessageBytes, shutdownGraceMs } = this.host.connectOptions(this.name);
    if (this.entry.kind === 'http') {
      return openRemoteChannel(this.entry.config, { name: this.name, maxMessageBytes, auth: this.host.auth?.(this.name), signal });
    }
    const config = (this.entry as Extract<ServerEntry, { kind: 'stdio' }>).config;
    // The daemon runs what it is given as it is: a sandboxed entry stays in this pool, in its sandbox.
    if (this.host.share && !config.sandbox) return this.host.share(this.name, config, this.host.connectOptions(this.name), signal);
    const { framing, timeout: _timeout, ...spec } = config;
    // Loaded with the first start: a pool answering from its cache never needs it.
    const { StdioChannel } = await import('../../transport/stdio/stdio-channel.js');
    return StdioChannel.open(spec, { name: this.name, framing, maxMessageBytes, shutdownGraceMs });
  }

  /** A start's time-out, with a word on package runners when the server has said nothing. */
  private hinted(error: unknown, printedNothing: boolean): unknown {
    const { config } = this.entry as { config?: { command?: string; args?: string[]; sandbox?: { network: boolean } } };
    if (config?.command === undefined) return error;
    const runner = { command: config.command, args: config.args, sandbox: config.sandbox };
    return withSandboxHint(withDownloadHint(error, runner, printedNothing), runner);
  }

  private failed(error: McpError): void {
    this.lastError = error;
    // Trying again cannot help until someone logs in.
    if (error.code === 'auth-required') return this.setState('needs-auth');
    this.failures++;
    this.retryAt = performance.now() + backoffDelay(this.failures);
    this.setState(this.failures >= MAX_FAILED_STARTS ? 'failed' : 'backoff');
  }

  /** Takes a connection from the slot and closes it; calls in flight on it learn why from `why`. */
  private async retire(client: McpClient, why: Retired, graceMs?: number, to: ServerState = 'stopped'): Promise<void> {
    this.retired.set(client, why);
    if (this.client === client) {
      this.client = undefined;
      this.quiet();
      if (why !== 'shutdown') this.setState(to);
    }
    await client.close(graceMs);
  }

  /** The server refused the tokens and they could not be renewed: it waits for a login. */
  private lostAuth(client: McpClient, error: McpError): void {
    this.lastError = error;
    this.begin('stop', () => this.retire(client, 'idle', undefined, 'needs-auth')).catch(() => undefined);
  }

  /**
   * After `login`: a server waiting for authorization may start again (on next use); a
   * running one keeps its connection, which sends the new token from now on.
   */
  authorized(): void {
    if (this.current !== 'needs-auth') return;
    this.failures = 0;
    this.lastError = undefined;
    this.setState('stopped');
  }

  /** A running server that goes away is started again on next use; a crash is not a failed start. */
  private watch(client: McpClient): void {
    client.once('close', (reason: McpError) => {
      if (this.client !== client) return; // the slot closed it itself
      if (reason.code !== 'closed') this.lastError = reason;
      this.client = undefined;
      this.quiet();
      this.setState('stopped');
    });
  }

  private watchHealth(client: McpClient): void {
    const check = (this.entry as Extract<ServerEntry, { kind: 'stdio' }>).config.healthCheck;
    if (!check) return;
    this.health = new HealthMonitor(
      check,
      (timeoutMs) => client.ping({ timeout: timeoutMs }),
      (error) => {
        if (this.client !== client || this.op) return;
        const wedged = new McpError(
          'timeout',
          `${serverLabel(this.name)}the server failed ${FAILED_PROBES_TO_RESTART} health checks in a row and was restarted (last: ${error.message})`,
          { server: this.name, phase: 'ping', cause: error },
        );
        this.lastError = wedged;
        // A failed start is recorded in the state; nobody waits for this restart. A good start
        // clears lastError, but why the server was restarted stays visible in status().
        this.begin('restart', async (signal) => {
          await this.stopThenStart(signal);
          this.lastError ??= wedged;
        }).catch(() => undefined);
      },
    );
  }

  /** Stops the timers of a connection the slot no longer has. */
  private quiet(): void {
    this.host.metrics.connected(undefined);
    clearTimeout(this.idleTimer);
    this.health?.close();
    this.health = undefined;
  }

  private armIdle(): void {
    const idle = 'config' in this.entry ? this.entry.config.idleTimeout : undefined;
    if (idle === undefined || this.active > 0 || !this.client) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.active === 0 && this.client && !this.op) void this.stop('stopped');
    }, idle).unref();
  }

  /** A request that failed because the slot closed its connection for a restart is `unavailable`, not `closed`. */
  private fromOldConnection(client: McpClient, error: unknown): unknown {
    const why = this.retired.get(client);
    if (why === undefined || why === 'shutdown' || !(error instanceof McpError) || error.code !== 'closed') return error;
    const what = why === 'idle' ? 'stopped for being idle' : 'restarted';
    return new McpError('unavailable', `${serverLabel(this.name)}the server was ${what} while the request was in flight; try again`, {
      server: this.name,
      ...(error.phase === undefined ? {} : { phase: error.phase }),
      cause: error,
    });
  }

  private setState(to: ServerState): void {
    const from = this.current;
    if (from === to || (from === 'closed' && to !== 'closed')) return;
    this.current = to;
    this.host.stateChanged(this.name, from, to);
  }

  private unavailableError(): McpError {
    const why =
      this.current === 'failed'
        ? `failed ${this.failures} starts in a row; call restart("${this.name}") to try again`
        : `is backing off after a failed start (next try in ${Math.max(0, Math.ceil(this.retryAt - performance.now()))} ms)`;
    const last = this.lastError ? `: ${this.lastError.message}` : '';
    return new McpError('unavailable', `${serverLabel(this.name)}the server ${why}${last}`, { server: this.name, cause: this.lastError });
  }

  private closedError(): McpError {
    return new McpError('closed', `${serverLabel(this.name)}the manager was shut down`, { server: this.name });
  }
}

/**
 * The end of one request a slot runs: the slot counts it, then the request makes its
 * caller's outcome. One object per request, given to the engine as the request's finish
 * (no promise layer) or used by the slot's own `then`.
 */
class SlotSettle<T, R> implements RequestFinish {
  constructor(
    private readonly slot: ServerSlot,
    private readonly request: SlotRequest<T, R>,
    private readonly client: McpClient,
    private readonly began: number,
    private readonly span: TraceHandle | undefined,
  ) {}

  /** The request's outcome is counted only once the caller's is known: a result its checks refuse is a failure. */
  done(result: unknown): R | Promise<R> {
    const request = this.request;
    let outcome: R | Promise<R>;
    try {
      request.check?.(result as T);
      outcome = request.done ? request.done(result as T) : (result as R);
    } catch (error) {
      return this.failed(error);
    }
    if (outcome instanceof Promise) return outcome.then((value) => this.succeeded(result, value), (error: unknown) => this.failed(error));
    return this.succeeded(result, outcome);
  }

  private succeeded(result: unknown, value: R): R {
    this.slot.requestSucceeded(this.began, this.span, result);
    return value;
  }

  failed(error: unknown): R | Promise<R> {
    const reported = this.slot.requestFailed(this.client, error, this.began, this.span);
    if (this.request.failed) return this.request.failed(reported);
    throw reported;
  }
}

/**
 * Whether a request failed because the server no longer takes the tokens (401 after a
 * refused refresh). A 403 asking for more scope is that one call's failure: the token
 * still serves the rest.
 */
function lostAuthorization(error: unknown): boolean {
  if (!(error instanceof McpError) || error.code !== 'auth-required') return false;
  const status = error.status ?? (error.cause instanceof McpError ? error.cause.status : undefined);
  return status !== 403;
}

/** Longest a shutdown waits for a live listing on its way. */
const RELIST_GRACE_MS = 1000;
