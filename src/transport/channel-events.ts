import type { McpError } from '../errors.js';
import type { Disposable, JsonRpcMessage, MessageContext } from './channel.js';
import { Listeners } from '../util/listeners.js';

/** What a registration on a closed channel returns: there is nothing to remove. */
const NOTHING: Disposable = { dispose: () => {} };

/**
 * The listener side of a {@link Channel} that every transport shares: its messages, its
 * noise and its one close event. A channel extends it and fires through `messages`,
 * `noise` and `fireClose`; each listener runs isolated ({@link Listeners}), so one that
 * throws neither stops the others nor reaches the transport's stream callbacks.
 */
export abstract class ChannelEvents {
  protected readonly messages = new Listeners<[JsonRpcMessage, MessageContext]>();
  protected readonly noise = new Listeners<[string]>();
  private readonly closes = new Listeners<[McpError]>();
  private closedWith: McpError | undefined;

  onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.closedWith ? NOTHING : this.messages.add(listener);
  }

  onNoise(listener: (text: string) => void): Disposable {
    return this.closedWith ? NOTHING : this.noise.add(listener);
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
   * Fires the close listeners once, then drops every listener (nothing is delivered after
   * the close). Later calls do nothing. Returns whether this call closed it.
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
