import { McpError, serverLabel } from '../../errors.js';
import type { Channel, ChannelInfo, Disposable, ExitStatus, JsonRpcMessage, MessageContext, RequestId } from '../../transport/channel.js';
import type { HeaderParam } from '../../transport/http/param-headers.js';
import { CLOSING_NOTE, fromWire } from '../daemon/wire.js';

/** A channel that hands everything to another; subclasses change what they must. */
abstract class Delegating implements Channel {
  constructor(protected readonly inner: Channel) {}
  send(message: JsonRpcMessage, context?: MessageContext): Promise<void> {
    return this.inner.send(message, context);
  }
  post(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, context?: MessageContext): void {
    this.inner.post(message, failed, context);
  }
  onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.inner.onMessage(listener);
  }
  onNoise(listener: (text: string) => void): Disposable {
    return this.inner.onNoise(listener);
  }
  onClose(listener: (reason: McpError) => void): Disposable {
    return this.inner.onClose(listener);
  }
  abandon(id: RequestId, reason?: string): void {
    this.inner.abandon(id, reason);
  }
  onStderr(listener: (line: string) => void): Disposable {
    return this.inner.onStderr(listener);
  }
  onExit(listener: (status: ExitStatus) => void): Disposable {
    return this.inner.onExit(listener);
  }
  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }
  setToolHeaders(tools: ReadonlyMap<string, readonly HeaderParam[]>): void {
    this.inner.setToolHeaders(tools);
  }
  close(graceMs?: number): Promise<void> {
    return this.inner.close(graceMs);
  }
  get info(): ChannelInfo {
    return this.inner.info;
  }
  get isOpen(): boolean {
    return this.inner.isOpen;
  }
}

/**
 * The owner's side of one member's session: counts the requests it has not answered yet,
 * so that an owner giving a server up drains them before it stops the process.
 */
export class CountedChannel extends Delegating {
  private readonly open = new Set<RequestId>();
  private onIdle: (() => void) | undefined;

  constructor(inner: Channel & { relate?(id: RequestId, to: RequestId): void }) {
    super(inner);
    const relate = inner.relate?.bind(inner);
    if (relate) (this as { relate?: typeof relate }).relate = relate;
  }

  get inFlight(): number {
    return this.open.size;
  }

  override onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.inner.onMessage((message, context) => {
      const m = message as { method?: unknown; id?: RequestId };
      if (typeof m.method === 'string' && m.id !== undefined) this.open.add(m.id);
      listener(message, context);
    });
  }

  override send(message: JsonRpcMessage, context?: MessageContext): Promise<void> {
    const m = message as { method?: unknown; id?: RequestId };
    if (m.method === undefined && m.id !== undefined && this.open.delete(m.id) && this.open.size === 0) this.onIdle?.();
    return this.inner.send(message, context);
  }

  /** Resolves once no request is in flight, or after `ms`. */
  idle(ms: number): Promise<void> {
    if (this.open.size === 0 || !this.isOpen) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.onIdle = () => (clearTimeout(timer), resolve());
    });
  }
}

/**
 * A member's channel to a server placed on a cluster member (this one or another): when
 * the owner stops the server, dies or cannot be reached, the calls in flight fail
 * `unavailable` (never retried: tools need not be idempotent) and the slot places the
 * server again at its next use.
 */
export class PlacedChannel extends Delegating {
  private told: McpError | undefined;

  constructor(
    inner: Channel,
    private readonly server: string,
    private readonly where: string,
    private readonly lost: (reason: McpError) => void,
  ) {
    super(inner);
    // The owner's closing note says why it ends the session (the server exited, it moved).
    inner.onMessage((message) => {
      if ((message as { method?: unknown }).method !== CLOSING_NOTE) return;
      this.told = fromWire((message as { params?: { error?: unknown } }).params?.error, server);
      void inner.close();
    });
    inner.onClose((reason) => {
      if (reason.code !== 'closed' || this.told) this.lost(reason);
    });
  }

  override onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable {
    return this.inner.onMessage((message, context) => {
      if ((message as { method?: unknown }).method !== CLOSING_NOTE) listener(message, context);
    });
  }

  override onClose(listener: (reason: McpError) => void): Disposable {
    return this.inner.onClose((reason) => listener(this.unavailable(this.told ?? reason)));
  }

  override send(message: JsonRpcMessage, context?: MessageContext): Promise<void> {
    return this.inner.send(message, context).catch((error: unknown) => {
      throw this.unavailable(error);
    });
  }

  private unavailable(reason: unknown): McpError {
    if (reason instanceof McpError && (reason.code === 'unavailable' || reason.code === 'cancelled' || reason.code === 'timeout')) return reason;
    if (reason instanceof McpError && reason.code === 'closed' && !this.told && !this.inner.isOpen && this.closedByUs) return reason;
    const why = (reason as Error)?.message ?? String(reason);
    return new McpError('unavailable', `${serverLabel(this.server)}lost the cluster member that runs the server (${this.where}): ${why}; calls in flight there failed and are not retried; the next call places the server again`, {
      server: this.server,
      cause: reason,
    });
  }

  private closedByUs = false;

  override close(graceMs?: number): Promise<void> {
    this.closedByUs = true;
    return this.inner.close(graceMs);
  }
}
