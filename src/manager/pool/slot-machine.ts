import { withinTime } from '../../util/deadline.js';
import { McpError, serverLabel } from '../../errors.js';
import type { McpClient } from '../../protocol/client.js';
import type { ServerEntry } from '../config/config.js';
import type { RunnableEntry } from './channel-factory.js';
import { HealthMonitor, wedgedError } from './health.js';
import { Relisting } from './relisting.js';
import type { SlotHost, SlotRequest } from './slot-host.js';
import { hinted, startConnection } from './slot-start.js';
import { backoffDelay, MAX_FAILED_STARTS, type ServerState, type ServerStatus, statusOf } from './slot-state.js';
import { checkTransition, internalError, plainState, type Ready, type SlotState, type Starting, type TRANSITIONS } from './slot-transitions.js';

/**
 * The one thing a slot is doing, if anything: a start (callers share it), a restart
 * (stop then start; callers and other restarts share it), a stop, or the shutdown.
 * Shutdown aborts a start or restart in flight and waits for it, so no process it
 * spawned outlives the shutdown; nothing else begins while one is in flight.
 */
interface Operation {
  readonly kind: 'start' | 'restart' | 'stop' | 'shutdown';
  /** Settles once the operation is over and no longer the slot's: a start's client, a restart's start error. */
  readonly done: Promise<unknown>;
  readonly abort: AbortController;
}

/** Why the slot closed a connection itself; calls in flight on it are told accordingly. */
export type Retired = 'restart' | 'idle' | 'shutdown';

const STOPPED = plainState('stopped');
const CLOSED = plainState('closed');
const NEEDS_AUTH = plainState('needs-auth');

/**
 * The life of one configured server as a state machine: its state (see {@link SlotState};
 * every move checked against {@link TRANSITIONS}) holds the client while `ready`; at most
 * one operation (start, restart, stop, shutdown) is in flight; backoff after failed
 * starts, health probes and idle stop. The slot is the only owner of its client and its
 * process, opens its channels through the host's factory, and never runs two processes of
 * its server at once. {@link ServerSlot} adds the requests it runs.
 */
export abstract class SlotMachine {
  protected current: SlotState;
  protected op: Operation | undefined;
  private closing: Promise<void> | undefined;
  protected readonly retired = new WeakMap<McpClient, Retired>();
  private failures = 0;
  /** Requests in flight or waiting for a start. */
  protected active = 0;
  protected idleTimer: NodeJS.Timeout | undefined;
  protected readonly relist = new Relisting();
  /** Requests waiting for a start, whose callers count for the questions the server asks meanwhile. */
  protected readonly waiting = new Set<SlotRequest<unknown, unknown>>();
  /** Set while {@link drain} waits for the calls in flight to end. */
  protected onIdle: (() => void) | undefined;
  lastError: McpError | undefined;

  constructor(
    readonly entry: ServerEntry,
    protected readonly host: SlotHost,
  ) {
    this.current = plainState(entry.kind === 'stdio' || entry.kind === 'http' ? 'idle' : entry.kind);
    if (entry.kind === 'invalid' || entry.kind === 'unsupported') this.lastError = entry.error;
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ServerState {
    return this.current.name;
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
    const state = this.current;
    return state.name === 'failed' || (state.name === 'backoff' && this.now() < state.retryAt);
  }

  status(): ServerStatus {
    return statusOf(this.entry, this.current.name, this.current.client, this.host.metrics.restarts, this.lastError);
  }

  /** The running client, starting the server first if it must (once, however many callers). */
  async ready(): Promise<McpClient> {
    for (;;) {
      const state = this.current;
      if (state.name === 'closed') throw this.closedError();
      const op = this.op;
      if (op?.kind === 'start') return op.done as Promise<McpClient>;
      if (op) {
        // A restart's failed start is this caller's error too; after a stop, start afresh.
        await op.done;
        continue;
      }
      switch (state.name) {
        case 'ready':
          return state.client;
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
          if (this.now() < state.retryAt) throw this.unavailableError();
      }
      return this.begin('start', (signal) => this.startOnce(signal));
    }
  }

  /**
   * A reload took this slot out of the pool: once the calls in flight on it (and a start
   * they wait for) are over, it shuts down. Later calls never reach it: the manager routes
   * them to its successor. Never throws.
   */
  async drain(graceMs?: number): Promise<void> {
    // A slot on its way out probes no more: a health restart would only start the old entry again.
    if (this.current.name === 'ready') this.current.health?.close();
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
      if (this.current.name === 'closed') throw this.closedError();
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
      if (this.current.name === 'closed') return;
      const op = this.op;
      if (op) {
        await op.done.catch(() => undefined);
        continue;
      }
      const client = this.current.client;
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
      const client = this.current.client;
      // The connection leaves the state at once (no call is sent on it any more), but a
      // listing on its way still lands (within the grace), so the cache learns what it says.
      if (client) this.retired.set(client, 'shutdown');
      this.leave(CLOSED);
      before?.abort.abort();
      await this.begin('shutdown', async () => {
        if (this.relist.due) await withinTime(this.relist.listed, Math.min(graceMs ?? RELIST_GRACE_MS, RELIST_GRACE_MS));
        await Promise.all([client?.close(graceMs), before?.done.catch(() => undefined)]);
      });
    })();
    return this.closing;
  }

  /** Makes `work` the slot's one operation; it stops being so just before its promise settles. Only the shutdown supersedes one in flight (and waits for it). */
  private begin<T>(kind: Operation['kind'], work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.op && kind !== 'shutdown') throw internalError(`server "${this.name}": a ${kind} began during a ${this.op.kind}`);
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
    const client = this.current.client;
    if (client) await this.retire(client, 'restart');
    await this.startOnce(signal);
  }

  /** One attempt to start (see {@link startConnection}); `ready` on success, else `backoff`, `failed` or `needs-auth`. Only a shutdown aborts it. */
  private async startOnce(signal: AbortSignal): Promise<McpClient> {
    if (signal.aborted) throw this.closedError();
    const starting: Starting = { name: 'starting', client: undefined, silent: false };
    this.move(starting);
    let client: McpClient;
    let early: boolean;
    try {
      const site = { name: this.name, entry: this.entry as RunnableEntry, host: this.host, waiting: this.waiting, closedError: () => this.closedError() };
      ({ client, early } = await startConnection(site, starting, signal));
    } catch (error) {
      if (signal.aborted) throw this.closedError();
      const told = hinted(this.entry as RunnableEntry, error, starting.silent);
      this.failed(told as McpError);
      throw told;
    }
    this.failures = 0;
    this.lastError = undefined;
    this.host.metrics.connected(client.traffic);
    this.watch(client);
    this.host.connected(this.name, client);
    if (early) this.relistBeside(client);
    this.move({ name: 'ready', client, health: this.healthOf(client) });
    this.armIdle();
    return client;
  }

  /** Lists the tools of a start that was ready on known ones, beside the requests that woke it (see {@link Relisting}). */
  private relistBeside(client: McpClient): void {
    // A shutdown takes the connection from the state but lets this listing land.
    const ours = () => this.current.client === client || (this.retired.get(client) === 'shutdown' && client.isOpen);
    this.relist.begin(
      client,
      this.active > 0,
      (tools) => (ours() ? this.host.toolsListed(this.name, client, tools) : undefined),
      (error) => {
        if (ours() && client.isOpen) this.host.relistFailed(this.name, error);
      },
    );
  }

  /** Settles once the live listing of a start ready on known tools has landed (at once if none is due); sends it if not yet sent. Never rejects. */
  get listed(): Promise<void> {
    return this.relist.listed;
  }

  private failed(error: McpError): void {
    this.lastError = error;
    // Trying again cannot help until someone logs in.
    if (error.code === 'auth-required') return this.move(NEEDS_AUTH);
    this.failures++;
    if (this.failures >= MAX_FAILED_STARTS) return this.move(plainState('failed'));
    this.move({ name: 'backoff', client: undefined, retryAt: this.now() + backoffDelay(this.failures) });
  }

  /** Takes the running connection from the slot and closes it; calls in flight on it learn why from `why`. */
  private async retire(client: McpClient, why: Retired, graceMs?: number, to: SlotState = STOPPED): Promise<void> {
    this.retired.set(client, why);
    if (this.current.client === client) this.leave(to);
    await client.close(graceMs);
  }

  /** The server refused the tokens and they could not be renewed: it waits for a login. */
  protected lostAuth(client: McpClient, error: McpError): void {
    this.lastError = error;
    this.begin('stop', () => this.retire(client, 'idle', undefined, NEEDS_AUTH)).catch(() => undefined);
  }

  /**
   * After `login`: a server waiting for authorization may start again (on next use); a
   * running one keeps its connection, which sends the new token from now on.
   */
  authorized(): void {
    if (this.current.name !== 'needs-auth') return;
    this.failures = 0;
    this.lastError = undefined;
    this.move(STOPPED);
  }

  /** A running server that goes away is started again on next use; a crash is not a failed start. */
  private watch(client: McpClient): void {
    client.once('close', (reason: McpError) => {
      if (this.current.client !== client) return; // the slot closed it itself
      if (reason.code !== 'closed') this.lastError = reason;
      this.leave(STOPPED);
    });
  }

  /** The probes of a new connection, if the entry asks for them: failing ones restart the server. */
  private healthOf(client: McpClient): HealthMonitor | undefined {
    const check = 'config' in this.entry ? this.entry.config.healthCheck : undefined;
    if (!check) return undefined;
    return new HealthMonitor(
      check,
      (timeoutMs) => client.ping({ timeout: timeoutMs }),
      (error) => {
        if (this.current.client !== client || this.op) return;
        const wedged = wedgedError(this.name, error);
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

  /** Moves to `to`, taking the connection (and stopping its timers) if the slot was `ready`. */
  private leave(to: SlotState): void {
    const state = this.current;
    if (state.name === 'ready') this.quiet(state);
    this.move(to);
  }

  /** Stops the timers of a connection the slot no longer has. */
  private quiet(ready: Ready): void {
    this.host.metrics.connected(undefined);
    clearTimeout(this.idleTimer);
    ready.health?.close();
  }

  /** The clock of backoff waits: the host's, or `performance.now()`. */
  private now(): number {
    return this.host.clock ? this.host.clock() : performance.now();
  }

  /** The one place the state changes: checked against the transition table. */
  private move(to: SlotState): void {
    const from = this.current.name;
    checkTransition(this.name, from, to.name);
    this.current = to;
    this.host.stateChanged(this.name, from, to.name);
  }

  protected armIdle(): void {
    const idle = 'config' in this.entry ? this.entry.config.idleTimeout : undefined;
    if (idle === undefined || this.active > 0 || this.current.name !== 'ready') return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.active === 0 && this.current.name === 'ready' && !this.op) void this.stop('stopped');
    }, idle).unref();
  }

  private unavailableError(): McpError {
    const state = this.current;
    const why =
      state.name === 'backoff'
        ? `is backing off after a failed start (next try in ${Math.max(0, Math.ceil(state.retryAt - this.now()))} ms)`
        : `failed ${this.failures} starts in a row; call restart("${this.name}") to try again`;
    const last = this.lastError ? `: ${this.lastError.message}` : '';
    return new McpError('unavailable', `${serverLabel(this.name)}the server ${why}${last}`, { server: this.name, cause: this.lastError });
  }

  protected closedError(): McpError {
    return new McpError('closed', `${serverLabel(this.name)}the manager was shut down`, { server: this.name });
  }
}

/** Longest a shutdown waits for a live listing on its way. */
const RELIST_GRACE_MS = 1000;
