import { EventEmitter } from 'node:events';
import pTimeout from 'p-timeout';
import { createMessageConnection, type MessageConnection, type MessageWriter } from 'vscode-jsonrpc';
import type { z } from 'zod';
import { McpError, type McpPhase } from '../errors.js';
import { createMessageIO, type Framing } from '../transport/framing.js';
import { type ExitStatus, type ProcessSpec, ServerProcess } from '../transport/server-process.js';
import { MessageSplit, type NonRequestMessage } from './message-split.js';
import { type PendingRequest, PendingRequests } from './pending-requests.js';
import { paginate } from './paginate.js';
import { SessionErrors } from './session-errors.js';
import {
  CallToolResultSchema,
  EmptyResultSchema,
  InitializeResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  LogMessageParamsSchema,
  ProgressParamsSchema,
  ReadResourceResultSchema,
} from './schemas.js';
import {
  type CallOptions,
  type CallToolResult,
  type Implementation,
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  type LogMessage,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type Root,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from './types.js';

/** How to start one stdio server: the per-server part of the config file. */
export interface ServerConfig extends Pick<ProcessSpec, 'command' | 'args' | 'env' | 'cwd' | 'inheritEnv'> {
  /** Wire framing. Default `"newline"` (MCP stdio). */
  framing?: Framing;
  /** Per-request timeout in ms, `initialize` included. Default 30000. */
  timeout?: number;
}

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
  /** The session ended; `reason` is `closed` after `close()`, else why the server went away. */
  close: (reason: McpError) => void;
  /** The server process exited; `reason` is why the session ended (`closed` when we closed it). */
  exit: (status: ExitStatus, reason: McpError | undefined) => void;
}

export interface ConnectOptions {
  /** Labels errors and messages: `server "fs": …`. */
  name?: string;
  /** Sent as `clientInfo` in `initialize`. Default `{ name: "lazy-mcp", version: … }`. */
  clientInfo?: Implementation;
  /** Offered to the server through `roots/list`; the `roots` capability is declared only if given. */
  roots?: Root[];
  /** Largest accepted message in bytes; a larger one closes the connection. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Default per-request timeout in ms when the server config has none. Default 30000. */
  timeout?: number;
  /** Grace for `close()` before SIGTERM/SIGKILL, in ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Listeners attached before the server is spawned. */
  listeners?: Partial<McpClientEvents>;
  /** Aborts the start (spawn and handshake) only; once connected the process is the client's. */
  signal?: AbortSignal;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_CLIENT_INFO: Implementation = { name: 'lazy-mcp', version: '0.1.0' };
/** How long a closed stdout may wait for the exit status, so the error can say how the server ended. */
const EXIT_STATUS_WAIT_MS = 200;

/**
 * One MCP session over one stdio server process: the handshake, typed requests with
 * timeouts, cancellation and progress, and the server's own requests and notifications.
 */
export class McpClient extends EventEmitter {
  private readonly pending = new PendingRequests((request, why) =>
    this.cancel(request.id, why === 'total' ? this.errors.timeout(request, request.totalTimeoutMs!, ' in total') : this.errors.timeout(request, request.timeoutMs)),
  );
  private readonly connection: MessageConnection;
  private readonly writer: MessageWriter;
  private readonly name: string | undefined;
  private readonly errors: SessionErrors;
  private readonly defaultTimeout: number;
  private nextId = 0;
  private endReason: McpError | undefined;
  private goingAway: Promise<void> | undefined;
  private readonly stdoutClosed: Promise<void>;
  private markStdoutClosed!: () => void;
  private closing: Promise<void> | undefined;
  private init: InitializeResult | undefined;

  /** Spawns the server and completes the `initialize` handshake. */
  static async connect(config: ServerConfig, options: ConnectOptions = {}): Promise<McpClient> {
    const { framing: _framing, timeout: _timeout, ...spec } = config;
    const process = await ServerProcess.spawn({ ...spec, name: options.name });
    let client: McpClient;
    try {
      client = new McpClient(process, config, options);
    } catch (error) {
      await process.close(0);
      throw error;
    }
    const onAbort = () => void client.close();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    try {
      // The deadline bounds the handshake only; once it settles the process is the client's.
      const timeout = client.defaultTimeout;
      await pTimeout(client.initialize(options), { milliseconds: timeout, message: client.errors.initializeTimeout(timeout) });
    } catch (error) {
      await client.close();
      throw client.errors.withStderr(error as McpError, process.stderrTail());
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    return client;
  }

  private constructor(
    private readonly process: ServerProcess,
    config: ServerConfig,
    private readonly options: ConnectOptions,
  ) {
    super();
    this.name = options.name;
    this.errors = new SessionErrors(options.name);
    this.defaultTimeout = config.timeout ?? options.timeout ?? DEFAULT_TIMEOUT_MS;
    for (const [event, listener] of Object.entries(options.listeners ?? {})) this.on(event, listener);

    process.on('stderr', (line) => this.emit('stderr', line));
    process.on('exit', (status) => void this.peerGone().then(() => this.emit('exit', status, this.endReason)));

    const io = createMessageIO(config.framing ?? 'newline', process.stdout, process.stdin, {
      maxMessageBytes: options.maxMessageBytes,
    });
    io.reader.onNoise((line) => this.emit('noise', line));
    this.writer = io.writer;
    const reader = new MessageSplit(io.reader, (message) => this.handle(message));
    reader.onError((error) => {
      if (error instanceof McpError) this.end(this.errors.connection(error));
    });
    this.stdoutClosed = new Promise((resolve) => (this.markStdoutClosed = resolve));
    reader.onClose(() => {
      this.markStdoutClosed();
      void this.peerGone();
    });
    this.writer.onError(() => void this.peerGone());

    this.connection = createMessageConnection(reader, this.writer);
    this.connection.onRequest('ping', () => ({}));
    const roots = options.roots;
    if (roots) this.connection.onRequest('roots/list', () => ({ roots }));
    this.connection.onError(() => undefined);
    this.connection.listen();
  }

  /** The server's `initialize` answer: `serverInfo`, `capabilities`, `instructions`, `protocolVersion`. */
  get serverInfo(): Implementation {
    return this.initialized.serverInfo;
  }
  get capabilities(): ServerCapabilities {
    return this.initialized.capabilities;
  }
  get instructions(): string | undefined {
    return this.initialized.instructions;
  }
  get protocolVersion(): string {
    return this.initialized.protocolVersion;
  }
  get pid(): number {
    return this.process.pid;
  }
  /** Whether the session still works (not closed, server not gone). */
  get isOpen(): boolean {
    return this.endReason === undefined;
  }
  /** Requests waiting for an answer. */
  get inFlight(): number {
    return this.pending.size;
  }
  stderrTail(): string[] {
    return this.process.stderrTail();
  }

  listTools(options?: CallOptions): Promise<Tool[]> {
    return paginate(this.name, 'tools/list', 'tools', (cursor) =>
      this.request('tools/list', cursor === undefined ? {} : { cursor }, ListToolsResultSchema, 'tools/list', options),
    );
  }

  callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    return this.request('tools/call', { name, arguments: args }, CallToolResultSchema, 'tools/call', options, true, `tools/call ${JSON.stringify(name)}`);
  }

  listResources(options?: CallOptions): Promise<Resource[]> {
    return paginate(this.name, 'resources/list', 'resources', (cursor) =>
      this.request('resources/list', cursor === undefined ? {} : { cursor }, ListResourcesResultSchema, 'resources/list', options),
    );
  }

  listResourceTemplates(options?: CallOptions): Promise<ResourceTemplate[]> {
    return paginate(this.name, 'resources/templates/list', 'resourceTemplates', (cursor) =>
      this.request(
        'resources/templates/list',
        cursor === undefined ? {} : { cursor },
        ListResourceTemplatesResultSchema,
        'resources/templates/list',
        options,
      ),
    );
  }

  readResource(uri: string, options?: CallOptions): Promise<ReadResourceResult> {
    return this.request('resources/read', { uri }, ReadResourceResultSchema, 'resources/read', options, false, `resources/read ${JSON.stringify(uri)}`);
  }

  async ping(options?: CallOptions): Promise<void> {
    await this.request('ping', {}, EmptyResultSchema, 'ping', options);
  }

  /**
   * The one request path under every typed method: sends, waits with a timeout that
   * progress may restart, cancels on timeout or abort, and validates the answer.
   */
  request<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    phase: McpPhase,
    options: CallOptions = {},
    withProgress = options.onProgress !== undefined,
    label = method,
  ): Promise<z.infer<S>> {
    if (this.endReason) return Promise.reject(this.errors.forRequest(this.endReason, { label, phase }));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(this.errors.cancelled({ label, phase }, signal));
    const badOption = invalidDuration(options, 'timeout') ?? invalidDuration(options, 'maxTotalTimeout');
    if (badOption) return Promise.reject(badOption);
    const id = ++this.nextId;
    const timeoutMs = options.timeout ?? this.defaultTimeout;
    return new Promise((resolve, reject) => {
      const now = performance.now();
      const request: PendingRequest = {
        id,
        label,
        phase,
        schema,
        timeoutMs,
        totalTimeoutMs: options.maxTotalTimeout,
        resetTimeoutOnProgress: options.resetTimeoutOnProgress ?? true,
        onProgress: options.onProgress,
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: now + timeoutMs,
        totalDeadline: options.maxTotalTimeout === undefined ? Infinity : now + options.maxTotalTimeout,
      };
      if (signal) {
        request.signal = signal;
        request.onAbort = () => this.cancel(id, this.errors.cancelled(request, signal));
        signal.addEventListener('abort', request.onAbort, { once: true });
      }
      this.pending.add(request);
      const sent = withProgress ? { ...params, _meta: { ...(params._meta as object), progressToken: id } } : params;
      this.writer.write({ jsonrpc: '2.0', id, method, params: sent } as never).catch((error: unknown) => {
        // A message that cannot be encoded fails alone; any other write failure means the pipe is gone.
        if (!(error instanceof McpError)) void this.peerGone();
        else if (this.pending.take(id)) reject(this.errors.unsendable(request, error));
      });
    });
  }

  /** Sends a notification to the server. */
  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.endReason) throw this.errors.forRequest(this.endReason, { label: method, phase: this.endReason.phase ?? 'initialize' });
    await this.writer.write({ jsonrpc: '2.0', method, params } as never);
  }

  /**
   * Ends the session: pending requests reject with `closed`, then the server process is
   * closed (stdin, SIGTERM, SIGKILL within `shutdownGraceMs`). Idempotent; never throws.
   */
  close(graceMs = this.options.shutdownGraceMs ?? 2000): Promise<void> {
    this.closing ??= (async () => {
      this.end(this.errors.closed());
      await this.process.close(graceMs);
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private get initialized(): InitializeResult {
    if (!this.init) throw new McpError('protocol-error', 'the session is not initialized', {});
    return this.init;
  }

  private async initialize(options: ConnectOptions): Promise<void> {
    const result = await this.request(
      'initialize',
      {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: options.roots ? { roots: { listChanged: false } } : {},
        clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
      },
      InitializeResultSchema,
      'initialize',
      { timeout: Infinity },
    );
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(result.protocolVersion)) {
      throw this.errors.unsupportedVersion(result.protocolVersion, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS);
    }
    this.init = result;
    await this.notify('notifications/initialized');
  }

  private handle(message: NonRequestMessage): void {
    if (message.kind === 'response') this.settle(message.id, message.result, message.error);
    else if (message.kind === 'notification') this.notification(message.method, message.params);
    else this.emit('noise', JSON.stringify(message.message).slice(0, 1000));
  }

  private settle(id: unknown, result: unknown, error: unknown): void {
    // An answer for an id we no longer wait on (cancelled, timed out) is dropped.
    const request = this.pending.take(id);
    if (!request) return;
    if (error !== undefined) {
      request.reject(this.errors.rpc(request, error));
      return;
    }
    const parsed = request.schema.safeParse(result);
    if (parsed.success) request.resolve(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      request.reject(this.errors.invalidResult(request, issue.path.length > 0 ? issue.path.join('.') : 'result', issue.message, parsed.error));
    }
  }

  private notification(method: string, params: unknown): void {
    switch (method) {
      case 'notifications/progress': {
        const parsed = ProgressParamsSchema.safeParse(params);
        const request = parsed.success ? this.pending.get(parsed.data.progressToken) : undefined;
        if (!parsed.success || !request) return;
        if (request.resetTimeoutOnProgress) request.deadline = performance.now() + request.timeoutMs;
        const { progress, total, message } = parsed.data;
        try {
          request.onProgress?.({ progress, total, message });
        } catch {
          // A listener's bug must not break the connection.
        }
        return;
      }
      case 'notifications/message': {
        const parsed = LogMessageParamsSchema.safeParse(params);
        if (parsed.success) this.emit('log', { level: parsed.data.level, logger: parsed.data.logger, data: parsed.data.data });
        return;
      }
      case 'notifications/tools/list_changed':
        this.emit('toolsChanged');
        return;
      case 'notifications/resources/list_changed':
        this.emit('resourcesChanged');
        return;
      default:
      // Other notifications (cancelled, resources/updated, …) need nothing from us.
    }
  }

  /** Gives up on a request: tells the server (never for `initialize`) and rejects the caller. */
  private cancel(id: number, error: McpError): void {
    const request = this.pending.take(id);
    if (!request) return;
    if (request.phase !== 'initialize' && !this.endReason) {
      this.notify('notifications/cancelled', { requestId: id, reason: error.message }).catch(() => undefined);
    }
    request.reject(error);
  }

  /**
   * The process exited, its stdout closed, or a write failed. Answers may still sit in
   * the pipe after an exit, and the exit status may lag a closed stdout, so wait a
   * moment (bounded) for both before failing what is pending.
   */
  private peerGone(): Promise<void> {
    if (this.endReason) return Promise.resolve();
    this.goingAway ??= this.waitAndEnd();
    return this.goingAway;
  }

  private async waitAndEnd(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.process.exited, this.stdoutClosed]),
      new Promise((resolve) => (timer = setTimeout(resolve, EXIT_STATUS_WAIT_MS))),
    ]);
    clearTimeout(timer);
    const status = this.process.exitStatus;
    const tail = this.process.stderrTail();
    this.end(status ? this.errors.peerExited(status, tail) : this.errors.peerEof(tail));
  }

  /** The session is over: everything pending rejects at once, and a live process is stopped. */
  private end(reason: McpError): void {
    if (this.endReason) return;
    this.endReason = reason;
    this.pending.rejectAll((request) => this.errors.forRequest(reason, request));
    this.connection?.dispose();
    // Also after the leader died: a wrapper's children may live on in its group.
    if (reason.code !== 'closed') void this.close();
    this.emit('close', reason);
  }
}

/** An error for a per-request duration option that is not a non-negative number of ms (or Infinity). */
function invalidDuration(options: CallOptions, field: 'timeout' | 'maxTotalTimeout'): McpError | undefined {
  const value = options[field];
  if (value === undefined || (typeof value === 'number' && value >= 0)) return undefined;
  return new McpError('invalid-config', `the ${field} option must be a non-negative number of milliseconds, got ${String(value)} (${typeof value})`, {});
}
