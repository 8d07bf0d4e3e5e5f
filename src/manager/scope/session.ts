import { setMaxListeners } from 'node:events';
import { McpError } from '../../errors.js';
import { keepListening } from '../../protocol/engine/pending-requests.js';
import type { CallOptions } from '../../protocol/types.js';
import { copyWith } from '../../util/copy-with.js';
import type { ToolPredicate } from '../catalog/tool-filter.js';
import type { Caller } from './host-handlers.js';
import type { PoolState, View } from './pool-state.js';
import { NO_OPTIONS, Scope } from './scope.js';
import { nextSessionId } from '../principals/principal-scope.js';

/**
 * One chat session's scope of the shared pool: the same processes, limited to some
 * servers and tools, its servers' questions answered by its own handlers. `close()`
 * cancels this session's requests in flight and nobody else's.
 */
export class ToolSession extends Scope {
  /**
   * Aborted by close(): the signal of every call made without a caller signal. One per
   * session, not one per call: an AbortController per call cost a session a third of the
   * manager's throughput (its construction and garbage). Each request's listener is removed
   * when it settles, so any number of calls in flight may listen.
   */
  private readonly shared = new AbortController();
  /** Calls that brought their own signal: each has a controller following that signal and close(). */
  private readonly inFlight = new Set<AbortController>();
  /** Per caller signal, the calls it cancels and its one listener. */
  private readonly followers = new Map<AbortSignal, { set: Set<AbortController>; onAbort: () => void }>();
  /** The options of a call that brings none. */
  private plain: CallOptions | undefined;
  /** This session's resource subscriptions, ended when it closes. */
  private readonly unsubscribes = new Set<() => Promise<void>>();
  private closed = false;

  /** @internal Made by `McpServerManager.session()`. */
  constructor(
    pool: PoolState,
    view: View,
    filter: ToolPredicate | undefined,
    caller: Caller,
    private readonly onClose: () => void,
    /** How `unrouted` events name this session. */
    readonly id: string = nextSessionId(),
  ) {
    super(pool, view, filter, caller);
    setMaxListeners(0, this.shared.signal);
    keepListening(this.shared.signal);
  }

  /** The servers this session may use; undefined means all of the manager's. */
  get servers(): string[] | undefined {
    return this.view && [...this.view];
  }

  /** Like the manager's; the subscription also ends when the session closes. */
  override async subscribeResource(server: string, uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    const unsubscribe = await super.subscribeResource(server, uri, onUpdated);
    if (this.closed) {
      await unsubscribe();
      throw this.closedError();
    }
    const mine = () => (this.unsubscribes.delete(mine), unsubscribe());
    this.unsubscribes.add(mine);
    return mine;
  }

  /** Cancels this session's calls in flight (they reject with `closed`); later calls reject with `closed`. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.shared.abort(this.closedError());
    for (const controller of this.inFlight) controller.abort(this.closedError());
    this.inFlight.clear();
    for (const unsubscribe of [...this.unsubscribes]) void unsubscribe();
    this.onClose();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Runs a request under this session's own abort, so close() reaches exactly its calls:
   * aborted by close(), they reject with `closed` (see `stoppedBy`).
   */
  protected override async track<T>(options: CallOptions | undefined, work: (options: CallOptions) => Promise<T>): Promise<T> {
    if (this.closed) throw this.closedError();
    const callerSignal = options?.signal;
    if (!callerSignal) return super.track(options, (o) => work(this.withSessionSignal(o)));
    const controller = new AbortController();
    if (callerSignal.aborted) controller.abort(callerSignal.reason);
    else this.follow(callerSignal, controller);
    this.inFlight.add(controller);
    try {
      return await super.track(options, (o) => work(copyWith(o, 'signal', controller.signal)));
    } finally {
      this.inFlight.delete(controller);
      this.unfollow(callerSignal, controller);
    }
  }

  /** The usual call, without a signal of its own: no closure, no async frame, no copy when it has no options either. */
  protected override plainOptions(options: CallOptions | undefined): CallOptions | undefined {
    return options?.signal === undefined && !this.closed ? this.withSessionSignal(options) : undefined;
  }

  /** A call's options with this session's signal, for a call that brings none: one object for every call that brings no options. */
  private withSessionSignal(options: CallOptions | undefined): CallOptions {
    return options === undefined || options === NO_OPTIONS ? (this.plain ??= { signal: this.shared.signal }) : copyWith(options, 'signal', this.shared.signal);
  }

  /**
   * Chains a caller's signal to a call's controller with one listener per signal however
   * many calls share it (AbortSignal.any leaks on Node 20 and a listener per call trips
   * MaxListenersExceededWarning).
   */
  private follow(signal: AbortSignal, controller: AbortController): void {
    let followers = this.followers.get(signal);
    if (!followers) {
      const set = new Set<AbortController>();
      followers = { set, onAbort: () => set.forEach((c) => c.abort(signal.reason)) };
      this.followers.set(signal, followers);
      signal.addEventListener('abort', followers.onAbort, { once: true });
    }
    followers.set.add(controller);
  }

  private unfollow(signal: AbortSignal, controller: AbortController): void {
    const followers = this.followers.get(signal);
    if (!followers) return;
    followers.set.delete(controller);
    if (followers.set.size > 0) return;
    signal.removeEventListener('abort', followers.onAbort);
    this.followers.delete(signal);
  }

  private closedError(): McpError {
    return new McpError('closed', 'the session was closed', {});
  }
}
