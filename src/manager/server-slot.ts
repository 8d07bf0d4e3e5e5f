import { McpError, serverLabel } from '../errors.js';
import { type ConnectOptions, McpClient } from '../protocol/client.js';
import type { Tool } from '../protocol/types.js';
import { abortable } from './abortable.js';
import type { ServerEntry } from './config.js';

/** Where a server is in its life. */
export type ServerState = 'idle' | 'starting' | 'ready' | 'stopped' | 'backoff' | 'failed' | 'invalid' | 'unsupported' | 'disabled' | 'closed';

export interface ServerStatus {
  state: ServerState;
  pid?: number;
  /** Times the server was started again after its first start. */
  restarts: number;
  lastError?: McpError;
  /** Tools known for it (from a start, or the manifest cache). */
  tools?: number;
}

/** First wait after a failed start; it doubles each failure up to {@link BACKOFF_CAP_MS}. */
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 30_000;
/** Failed starts in a row after which a server is `failed` until `restart()`. */
export const MAX_FAILED_STARTS = 5;

/** What a slot needs from its manager: shared options and where to report. */
export interface SlotHost {
  connectOptions(server: string): ConnectOptions;
  stateChanged(server: string, from: ServerState, to: ServerState): void;
  /** A start listed these tools from the live server. */
  toolsListed(server: string, client: McpClient, tools: Tool[]): Promise<void>;
}

/**
 * One configured server: its state, its client while running, single-flight start,
 * backoff after failed starts, and idle stop. The slot is the only owner of its client.
 */
export class ServerSlot {
  private current: ServerState;
  private client: McpClient | undefined;
  private starting: Promise<McpClient> | undefined;
  private startAbort: AbortController | undefined;
  private failures = 0;
  private started = 0;
  private backoffTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private active = 0;
  lastError: McpError | undefined;

  constructor(
    readonly entry: ServerEntry,
    private readonly host: SlotHost,
  ) {
    this.current = entry.kind === 'stdio' ? 'idle' : entry.kind === 'http' ? 'unsupported' : entry.kind;
    if (entry.kind === 'invalid' || entry.kind === 'unsupported') this.lastError = entry.error;
    // Until the HTTP channels are wired into the slot, a remote entry is reported, not run.
    if (entry.kind === 'http') {
      this.lastError = new McpError('unsupported-transport', `${serverLabel(entry.name)}transport ${JSON.stringify(entry.config.transport)} (${entry.config.url}) is not supported; lazy-mcp runs stdio servers only`, {
        server: entry.name,
        phase: 'config',
      });
    }
  }

  get name(): string {
    return this.entry.name;
  }

  get state(): ServerState {
    return this.current;
  }

  /** Enabled stdio servers take part in listings; the rest are only reported. */
  get enabled(): boolean {
    return this.entry.kind === 'stdio';
  }

  status(): ServerStatus {
    return {
      state: this.current,
      ...(this.client?.isOpen ? { pid: this.client.pid } : {}),
      restarts: Math.max(0, this.started - 1),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** The running client, starting the server first if it must (once, however many callers). */
  async ready(): Promise<McpClient> {
    if (this.client?.isOpen) return this.client;
    if (this.starting) return this.starting;
    const entry = this.entry;
    switch (this.current) {
      case 'closed':
        throw this.closedError();
      case 'invalid':
      case 'unsupported':
        throw (entry as { error?: McpError }).error ?? this.lastError;
      case 'disabled':
        throw new McpError('unavailable', `${serverLabel(this.name)}the server is disabled in the config`, { server: this.name });
      case 'backoff':
      case 'failed':
        throw this.unavailableError();
      default:
        return this.start();
    }
  }

  /**
   * Runs one request against the server, counting it as activity for idle stop.
   * `touch` is for the request to call on progress, which is activity too.
   */
  async run<T>(request: (client: McpClient, touch: () => void) => Promise<T>, signal?: AbortSignal): Promise<T> {
    // Aborting stops this caller's wait for a start, not the start others share.
    const client = await abortable(this.ready(), signal, 'waiting for the server to start', this.name);
    this.active++;
    clearTimeout(this.idleTimer);
    try {
      return await request(client, () => this.idleTimer?.refresh());
    } finally {
      this.active--;
      this.armIdle();
    }
  }

  /** Clears backoff or failure and starts again; rejects with the start error if that fails. */
  async restart(): Promise<void> {
    if (this.current === 'closed') throw this.closedError();
    if (!this.enabled) await this.ready();
    clearTimeout(this.backoffTimer);
    this.failures = 0;
    await this.stop('idle');
    await this.start();
  }

  /** Stops the running server, if any, and leaves the slot in `to`. */
  async stop(to: ServerState, graceMs?: number): Promise<void> {
    clearTimeout(this.idleTimer);
    clearTimeout(this.backoffTimer);
    this.startAbort?.abort();
    const client = this.client;
    const starting = this.starting;
    this.client = undefined;
    if (this.enabled || to === 'closed') this.setState(to);
    // An aborted start closes its own process; wait for that so nothing outlives a stop.
    await Promise.all([client?.close(graceMs), starting?.catch(() => undefined)]);
  }

  private start(): Promise<McpClient> {
    this.setState('starting');
    clearTimeout(this.backoffTimer);
    const abort = new AbortController();
    this.startAbort = abort;
    const { config } = this.entry as Extract<ServerEntry, { kind: 'stdio' }>;
    const attempt = (async () => {
      const client = await McpClient.connect(config, { ...this.host.connectOptions(this.name), signal: abort.signal });
      // Until the start settles, aborting it (stop, shutdown) must also end the listing.
      const onAbort = () => void client.close();
      abort.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const tools = client.capabilities.tools ? await client.listTools() : [];
        if (abort.signal.aborted) throw this.closedError();
        await this.host.toolsListed(this.name, client, tools);
        return client;
      } catch (error) {
        await client.close();
        throw error;
      } finally {
        abort.signal.removeEventListener('abort', onAbort);
      }
    })();
    const settled = (): boolean => {
      if (this.starting !== promise) return false;
      this.starting = undefined;
      this.startAbort = undefined;
      return true;
    };
    const promise: Promise<McpClient> = attempt.then(
      (client) => {
        if (!settled() || abort.signal.aborted) {
          void client.close();
          throw this.current === 'closed' ? this.closedError() : this.interruptedError();
        }
        this.started++;
        this.failures = 0;
        this.lastError = undefined;
        this.client = client;
        this.watch(client);
        this.setState('ready');
        this.armIdle();
        return client;
      },
      (error: McpError) => {
        if (!settled() || abort.signal.aborted) throw this.current === 'closed' ? this.closedError() : this.interruptedError();
        this.lastError = error;
        this.failures++;
        if (this.failures >= MAX_FAILED_STARTS) this.setState('failed');
        else {
          this.setState('backoff');
          const wait = Math.min(BACKOFF_BASE_MS * 2 ** (this.failures - 1), BACKOFF_CAP_MS);
          this.backoffTimer = setTimeout(() => this.setState('stopped'), wait).unref();
        }
        throw error;
      },
    );
    this.starting = promise;
    return promise;
  }

  /** A running server that goes away is started again on next use; a crash is not a failed start. */
  private watch(client: McpClient): void {
    client.once('close', (reason: McpError) => {
      const crashed = reason.code !== 'closed';
      if (crashed) this.lastError = reason;
      if (this.client === client) {
        this.client = undefined;
        clearTimeout(this.idleTimer);
        this.setState('stopped');
      }
    });
  }

  private armIdle(): void {
    const idle = 'config' in this.entry ? this.entry.config.idleTimeout : undefined;
    if (idle === undefined || this.active > 0 || !this.client) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.active === 0 && this.current === 'ready') void this.stop('stopped');
    }, idle).unref();
  }

  private setState(to: ServerState): void {
    const from = this.current;
    if (from === to || (from === 'closed' && to !== 'closed')) return;
    this.current = to;
    this.host.stateChanged(this.name, from, to);
  }

  private unavailableError(): McpError {
    const why = this.current === 'failed' ? `failed ${this.failures} starts in a row; call restart("${this.name}") to try again` : 'is backing off after a failed start';
    const last = this.lastError ? `: ${this.lastError.message}` : '';
    return new McpError('unavailable', `${serverLabel(this.name)}the server ${why}${last}`, { server: this.name, cause: this.lastError });
  }

  /** For the waiters of a start that `restart()` or an idle stop cut short. */
  private interruptedError(): McpError {
    return new McpError('unavailable', `${serverLabel(this.name)}the server's start was interrupted by a restart; try again`, { server: this.name });
  }

  private closedError(): McpError {
    return new McpError('closed', `${serverLabel(this.name)}the manager was shut down`, { server: this.name });
  }
}
