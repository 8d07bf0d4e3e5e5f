import type { Message } from 'vscode-jsonrpc';
import { McpError, serverLabel, stderrHint } from '../../errors.js';
import type { Channel, ChannelInfo, Disposable, JsonRpcMessage, MessageContext, RequestId } from '../channel.js';
import { ChannelEvents } from '../channel-events.js';
import type { FramedMessageWriter } from '../framing/framed-writer.js';
import { createMessageIO, type Framing, type LazyMessageReader } from '../framing/framing.js';
import { Listeners } from '../../util/listeners.js';
import { type ExitStatus, type ProcessSpec, ServerProcess } from './server-process.js';

/** How long a closed stdout may wait for the exit status, so the reason can say how the server ended. */
const EXIT_STATUS_WAIT_MS = 200;

export interface StdioChannelOptions {
  /** Labels the close reasons: `server "fs": …`. */
  name?: string;
  /** Wire framing. Default `"newline"` (MCP stdio). */
  framing?: Framing;
  /** Largest accepted message in bytes; a larger one closes the channel with `protocol-error`. Default 64 MiB. */
  maxMessageBytes?: number;
  /** `close()`'s default grace before SIGTERM/SIGKILL, in ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Most bytes queued for a server that is not reading; a send past it fails `unavailable`. Default 16 MiB. */
  maxQueuedBytes?: number;
}

/**
 * One stdio server process as a {@link Channel}: the framing on its pipes, its stderr,
 * and the diagnosis of how it went away. The channel owns the process: when the
 * channel ends for any reason the process group is stopped.
 */
export class StdioChannel extends ChannelEvents implements Channel {
  readonly info: ChannelInfo;
  private readonly writer: FramedMessageWriter;
  private readonly stderrListeners = new Listeners<[string]>();
  private readonly exitListeners = new Listeners<[ExitStatus]>();
  private readonly prefix: string;
  private goingAway: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private stdoutClosed!: () => void;
  private readonly stdoutDone = new Promise<void>((resolve) => (this.stdoutClosed = resolve));

  /** Spawns the server; rejects with `spawn-failed` or `invalid-config` (see {@link ServerProcess.spawn}). */
  static async open(spec: ProcessSpec, options: StdioChannelOptions = {}): Promise<StdioChannel> {
    const process = await ServerProcess.spawn({ ...spec, name: options.name ?? spec.name });
    try {
      return new StdioChannel(process, options);
    } catch (error) {
      await process.close(0);
      throw error;
    }
  }

  private constructor(
    readonly process: ServerProcess,
    private readonly options: StdioChannelOptions,
  ) {
    super();
    this.prefix = serverLabel(options.name);
    this.info = { transport: 'stdio', pid: process.pid, stderrTail: () => process.stderrTail(), traffic: process.traffic };
    const io = createMessageIO(options.framing ?? 'newline', process.stdout, process.stdin, {
      maxMessageBytes: options.maxMessageBytes,
      ...(options.maxQueuedBytes === undefined ? {} : { maxQueuedBytes: options.maxQueuedBytes }),
      // A write failure other than the writer's own refusal means the pipe is gone.
      streamFailure: () => {
        void this.peerGone();
        return this.closeReason ?? new McpError('peer-eof', `${this.prefix}the server closed its stdin`, { server: this.options.name });
      },
    });
    this.writer = io.writer;
    this.listen(io.reader);
    this.writer.onError(() => void this.peerGone());
    process.on('stderr', (line) => this.stderrListeners.fire(line));
    process.on('exit', (status) => {
      void this.peerGone().then(() => this.exitListeners.fire(status));
    });
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  /**
   * A request nobody waits for: still queued, it is dropped unwritten (the server never
   * sees it); written, the server is told with `notifications/cancelled`.
   */
  abandon(id: RequestId, reason?: string): void {
    if (this.closeReason || this.writer.drop(id)) return;
    void this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, ...(reason === undefined ? {} : { reason }) } } as JsonRpcMessage).catch(() => undefined);
  }

  send(message: JsonRpcMessage): Promise<void> {
    return new Promise((resolve, reject) => this.post(message, reject, resolve));
  }

  post(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, done?: () => void): void {
    if (this.closeReason) return failed(this.closeReason, message);
    this.writer.post(message as Message, failed as (error: Error, message: Message) => void, done);
  }

  onStderr(listener: (line: string) => void): Disposable {
    return this.stderrListeners.add(listener);
  }

  onExit(listener: (status: ExitStatus) => void): Disposable {
    return this.exitListeners.add(listener);
  }

  /** Ends the channel (reason `closed`) and stops the process group within `graceMs` (+1 s at most). */
  close(graceMs = this.options.shutdownGraceMs ?? 2000): Promise<void> {
    this.closing ??= (async () => {
      this.end(new McpError('closed', `${this.prefix}the connection was closed`, { server: this.options.name }));
      await this.process.close(graceMs);
    })();
    return this.closing;
  }

  private listen(reader: LazyMessageReader): void {
    reader.onNoise((text) => this.noise.fire(text));
    reader.onError((error) => {
      // The framing's own verdict (a message over the size limit, broken framing) ends the channel.
      if (error instanceof McpError) {
        this.end(new McpError(error.code, `${this.prefix}${error.message}`, { server: this.options.name, cause: error.cause }));
      }
    });
    reader.onClose(() => {
      this.stdoutClosed();
      void this.peerGone();
    });
    const context: MessageContext = {};
    // After the close there is no listener left to call.
    reader.listen((message) => this.messages.fire(message as JsonRpcMessage, context));
  }

  /**
   * The process exited, its stdout closed, or a write failed. Answers may still sit in
   * the pipe after an exit, and the exit status may lag a closed stdout, so wait a
   * moment (bounded) for both before saying why the channel ended.
   */
  private peerGone(): Promise<void> {
    if (this.closeReason) return Promise.resolve();
    this.goingAway ??= this.waitAndEnd();
    return this.goingAway;
  }

  private async waitAndEnd(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.process.exited, this.stdoutDone]),
      new Promise((resolve) => (timer = setTimeout(resolve, EXIT_STATUS_WAIT_MS))),
    ]);
    clearTimeout(timer);
    const status = this.process.exitStatus;
    const tail = this.process.stderrTail();
    const server = this.options.name;
    if (status) {
      const how = status.signal ? `was killed by ${status.signal}` : `exited with code ${status.exitCode}`;
      this.end(
        new McpError('peer-exited', `${this.prefix}the server process ${how}${stderrHint(tail)}`, {
          server,
          exitCode: status.exitCode,
          signal: status.signal,
          stderrTail: tail,
        }),
      );
    } else {
      this.end(new McpError('peer-eof', `${this.prefix}the server closed its stdout${stderrHint(tail)}`, { server, stderrTail: tail }));
    }
  }

  private end(reason: McpError): void {
    if (!this.fireClose(reason)) return;
    // Also after the leader died: a wrapper's children may live on in its group.
    if (reason.code !== 'closed') void this.close();
  }
}
