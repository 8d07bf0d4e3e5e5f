import type { Socket } from 'node:net';
import type { Message } from 'vscode-jsonrpc';
import { McpError } from '../../errors.js';
import type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext, RequestId } from '../../transport/channel.js';
import { ChannelEvents } from '../../transport/channel-events.js';
import type { FramedMessageWriter } from '../../transport/framing/framed-writer.js';
import { createMessageIO } from '../../transport/framing/framing.js';
import { Listeners } from '../../util/listeners.js';
import { CLOSING_NOTE, fromWire, RELATED_KEY, STARTED_NOTE, STDERR_NOTE } from './wire.js';

export interface SocketChannelOptions {
  /** The server this connection is for: labels errors. */
  name?: string;
  maxMessageBytes?: number;
  /** Why the channel ended when the peer went away without saying why. */
  lost: () => McpError;
}

/** How long `close()` waits for the socket to flush and close before destroying it. */
const CLOSE_WAIT_MS = 1000;

/**
 * MCP over one Unix socket between a client and the pool daemon, newline-framed as on
 * stdio. On the client it stands where a server's pipes would (`info` shows the shared
 * server's pid); on the daemon it is the server end of one client's session. Messages
 * may carry the request they are about ({@link RELATED_KEY}), so a server's question
 * about a call reaches the session that made it; the daemon's stderr and closing notes
 * are taken out of the MCP stream here.
 */
export class SocketChannel extends ChannelEvents implements Channel {
  /** `pid` and `preferredEra` as the attach's answer tells them (the server's; the daemon speaks both eras). */
  readonly info: Omit<ChannelInfo, 'pid' | 'preferredEra'> & { pid?: number; preferredEra?: '2026' | 'legacy' };
  private readonly writer: FramedMessageWriter;
  private readonly stderrListeners = new Listeners<[string]>();
  private readonly exitListeners = new Listeners<[{ exitCode?: number; signal?: string }]>();
  /** Outgoing requests of ours that are about a request of the peer. */
  private readonly related = new Map<RequestId, RequestId>();
  /** Takes a message of the peer's before the session does: true when it was taken (the daemon's short path). */
  intercept: ((message: Record<string, unknown>) => boolean) | undefined = undefined;
  private told: McpError | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly socket: Socket,
    private readonly options: SocketChannelOptions,
  ) {
    super();
    // The daemon speaks both eras, and no process is lost to a probe: the newest goes first,
    // unless the attach's answer says the server speaks the legacy era (see AttachResult.era).
    const info = { transport: 'stdio' as const, preferredEra: '2026' as '2026' | 'legacy', pid: undefined as number | undefined, stderrTail: () => [] as string[], singleRequest: false };
    this.info = info;
    socket.setNoDelay?.(true);
    const { reader, writer } = createMessageIO('newline', socket, socket, {
      maxMessageBytes: options.maxMessageBytes,
      streamFailure: () => this.closeReason ?? options.lost(),
    });
    this.writer = writer;
    reader.onNoise((text) => this.noise.fire(text));
    reader.onError((error) => {
      if (error instanceof McpError) this.end(error);
    });
    reader.onClose(() => this.end(this.told ?? options.lost()));
    writer.onError(() => this.end(this.told ?? options.lost()));
    socket.on('error', () => this.end(this.told ?? options.lost()));
    socket.on('close', () => this.end(this.told ?? options.lost()));
    reader.listen((message) => this.receive(message as unknown as Record<string, unknown>));
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  /** Our request `id` is about the peer's request `about`: it travels marked so. */
  relate(id: RequestId, about: RequestId): void {
    this.related.set(id, about);
  }

  override send(message: JsonRpcMessage, context?: MessageContext): Promise<void> {
    return new Promise((resolve, reject) => this.write(message, reject, resolve, context));
  }

  override post(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, context?: MessageContext): void {
    this.write(message, failed, undefined, context);
  }

  private write(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, done: (() => void) | undefined, context: MessageContext | undefined): void {
    if (this.closeReason) return failed(this.closeReason, message);
    const id = (message as { id?: RequestId }).id;
    let about = context?.relatedTo;
    if (about === undefined && id !== undefined && 'method' in message && this.related.size > 0) {
      about = this.related.get(id);
      this.related.delete(id);
    }
    const framed = about === undefined ? message : { ...message, [RELATED_KEY]: about };
    this.writer.post(framed as Message, failed as (error: Error, message: Message) => void, done);
  }

  override onStderr(listener: (line: string) => void): Disposable {
    return this.stderrListeners.add(listener);
  }

  override onExit(listener: (status: { exitCode?: number; signal?: string }) => void): Disposable {
    return this.exitListeners.add(listener);
  }

  /** Ends the connection (reason `closed`); the peer sees the socket close. Idempotent; never throws. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.end(new McpError('closed', `${this.prefix()}the connection was closed`, { server: this.options.name }));
      if (this.socket.destroyed) return resolve();
      const timer = setTimeout(() => this.socket.destroy(), CLOSE_WAIT_MS).unref();
      this.socket.once('close', () => (clearTimeout(timer), resolve()));
      this.socket.end();
    });
    return this.closing;
  }

  private receive(m: Record<string, unknown>): void {
    if (m.method === STDERR_NOTE) {
      const line = (m.params as { line?: unknown } | undefined)?.line;
      if (typeof line === 'string') this.stderrListeners.fire(line);
      return;
    }
    if (m.method === STARTED_NOTE) {
      const pid = (m.params as { pid?: unknown } | undefined)?.pid;
      if (Number.isSafeInteger(pid) && (pid as number) > 0) this.info.pid = pid as number;
      return;
    }
    if (m.method === CLOSING_NOTE) {
      const error = (m.params as { error?: unknown } | undefined)?.error;
      // The session is over now: answers that may still follow are for calls that failed with this reason.
      const told = (this.told = fromWire(error, this.options.name));
      this.end(told);
      this.socket.destroy();
      const { exitCode, signal } = told;
      if (exitCode !== undefined || signal !== undefined) this.exitListeners.fire({ ...(exitCode === undefined ? {} : { exitCode }), ...(signal === undefined ? {} : { signal }) });
      return;
    }
    if (this.intercept?.(m)) return;
    let context: MessageContext = NO_CONTEXT;
    if (RELATED_KEY in m) {
      const about = m[RELATED_KEY];
      delete m[RELATED_KEY];
      if (typeof about === 'number' || typeof about === 'string') context = { relatedTo: about };
    }
    this.messages.fire(m as unknown as JsonRpcMessage, context);
  }

  private prefix(): string {
    return this.options.name === undefined ? '' : `server ${JSON.stringify(this.options.name)}: `;
  }

  private end(reason: McpError): void {
    if (!this.fireClose(reason)) return;
    this.related.clear();
    if (!this.socket.destroyed && reason.code !== 'closed') this.socket.destroy();
  }
}

const NO_CONTEXT: MessageContext = Object.freeze({}) as MessageContext;
