import type { McpError } from '../errors.js';
import type { Disposable, ExitStatus, JsonRpcMessage, MessageContext, RequestId } from './channel.js';
import type { HeaderParam } from './http/param-headers.js';
import { Listeners } from '../util/listeners.js';

/** What a registration on a closed channel returns: there is nothing to remove. */
const NOTHING: Disposable = { dispose: () => {} };

/**
 * What every transport's {@link Channel} shares: its listeners (messages, noise, stderr,
 * exit and the one close event) and the behaviour of a transport with nothing of its own
 * to add (`post` is `send`, `abandon` sends `notifications/cancelled`, the era and tool
 * marks change nothing). A channel extends it, fires through `messages`, `noise`,
 * `stderr`, `exits` and `fireClose`, and overrides what its transport does otherwise.
 * Each listener runs isolated ({@link Listeners}), so one that throws neither stops the
 * others nor reaches the transport's stream callbacks.
 */
export abstract class ChannelEvents {
  protected readonly messages = new Listeners<[JsonRpcMessage, MessageContext]>();
  protected readonly noise = new Listeners<[string]>();
  protected readonly stderr = new Listeners<[string]>();
  protected readonly exits = new Listeners<[ExitStatus]>();
  private readonly closes = new Listeners<[McpError]>();
  private closedWith: McpError | undefined;

  abstract send(message: JsonRpcMessage, context?: MessageContext): Promise<void>;

  post(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, context?: MessageContext): void {
    this.send(message, context).catch((error: unknown) => failed(error, message));
  }

  abandon(id: RequestId, reason?: string): void {
    if (this.closedWith) return;
    this.send(cancelledNote(id, reason)).catch(() => undefined);
  }

  setProtocolVersion(_version: string): void {}

  setToolHeaders(_tools: ReadonlyMap<string, readonly HeaderParam[]>): void {}

  onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.closedWith ? NOTHING : this.messages.add(listener);
  }

  onNoise(listener: (text: string) => void): Disposable {
    return this.closedWith ? NOTHING : this.noise.add(listener);
  }

  onStderr(listener: (line: string) => void): Disposable {
    return this.stderr.add(listener);
  }

  /** Kept after the close: a process's exit status may come after its channel ended. */
  onExit(listener: (status: ExitStatus) => void): Disposable {
    return this.exits.add(listener);
  }

  /** A listener added after the close is never called (the close has happened). */
  onClose(listener: (reason: McpError) => void): Disposable {
    return this.closedWith ? NOTHING : this.closes.add(listener);
  }

  /** Why the channel ended; undefined until `fireClose`. */
  protected get closeReason(): McpError | undefined {
    return this.closedWith;
  }

  /**
   * Fires the close listeners once, then drops every listener of messages (nothing is
   * delivered after the close). Later calls do nothing. Returns whether this call closed it.
   */
  protected fireClose(reason: McpError): boolean {
    if (this.closedWith) return false;
    this.closedWith = reason;
    this.closes.fire(reason);
    this.closes.clear();
    this.messages.clear();
    this.noise.clear();
    return true;
  }
}

/** The `notifications/cancelled` that tells a peer we no longer wait for request `id`. */
export function cancelledNote(id: RequestId, reason?: string): JsonRpcMessage {
  return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, ...(reason === undefined ? {} : { reason }) } } as JsonRpcMessage;
}
