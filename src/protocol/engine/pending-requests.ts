import type { z } from 'zod';
import type { McpError, McpPhase } from '../../errors.js';
import { RequestTable } from './request-table.js';
import type { Label } from '../session-errors.js';
import type { Progress } from '../types.js';

/** Everything about one request in flight, in one record keyed by its JSON-RPC id. */
export interface PendingRequest {
  readonly id: number;
  /** `tools/call "echo"`: how messages about this request name it. */
  readonly label: Label;
  readonly phase: McpPhase;
  /** Validates the result; none: the raw result is handed back (the 2026 era checks `resultType` first). */
  readonly schema?: z.ZodType;
  /** A quick check that, when it holds, stands for `schema`. */
  readonly accepts?: (result: unknown) => boolean;
  readonly timeoutMs: number;
  readonly totalTimeoutMs?: number;
  readonly resetTimeoutOnProgress: boolean;
  readonly onProgress?: (progress: Progress) => void;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: McpError) => void;
  /** When the request times out (`performance.now()` ms); progress may push it back. Infinity: never. */
  deadline: number;
  /** When `maxTotalTimeout` ends it, whatever progress came. Infinity: never. */
  readonly totalDeadline: number;
  /** Cancels the request when it aborts. */
  signal?: AbortSignal;
  /** Whatever the caller attached (the client: the host handlers of the call), for requests the peer makes about this one. */
  scope?: unknown;
  /** Makes the caller's outcome from the request's, before the promise settles. */
  finish?: RequestFinish;
}

/**
 * Runs when a request settles, before its promise does: what `done` returns (or throws) is
 * what the caller's promise resolves (or rejects) with, and likewise `failed` for a failure.
 * A caller that handles every answer (the manager's counting and checks) so saves each
 * request a promise layer.
 */
export interface RequestFinish {
  done(result: unknown): unknown;
  failed(error: unknown): unknown;
}

/** Settles `request` with `value`, through its finish when it has one. */
export function fulfil(request: PendingRequest, value: unknown): void {
  const finish = request.finish;
  if (!finish) return request.resolve(value);
  try {
    request.resolve(finish.done(value));
  } catch (error) {
    request.reject(error as McpError);
  }
}

/** Fails `request` with `error`, through its finish when it has one. */
export function fail(request: PendingRequest, error: McpError): void {
  const finish = request.finish;
  if (!finish) return request.reject(error);
  try {
    request.resolve(finish.failed(error));
  } catch (thrown) {
    request.reject(thrown as McpError);
  }
}

/** The promise of a request refused before it was sent, through its finish when it has one. */
export function refused<T>(error: unknown, finish: RequestFinish | undefined): Promise<T> {
  return finish ? new Promise<T>((resolve) => resolve(finish.failed(error) as T)) : Promise.reject(error);
}

/** How many requests one signal cancels, and the one listener they share. */
interface SignalGroup {
  count: number;
  /** The first request while the count was 0, while it is pending: a signal of one request finds it at once. */
  first: PendingRequest | undefined;
  readonly onAbort: () => void;
}

/**
 * Signals that cancel many requests over a long life, one after another (a session's own):
 * their listener stays while no request uses them, so calls made one at a time do not add
 * and remove it every time (1.5 µs a pair on Node 20). It goes when the signal aborts or
 * the requests' session ends.
 */
const lasting = new WeakSet<AbortSignal>();

/** Marks `signal` as one that cancels many requests over a long life: see {@link lasting}. */
export function keepListening(signal: AbortSignal): void {
  lasting.add(signal);
}

/** Why a request ran out of time: its timeout, or its `maxTotalTimeout`. */
export type Expiry = 'timeout' | 'total';

/**
 * The requests a client is waiting on. Settling a request always goes through here,
 * so its abort listener is removed whichever way it ends.
 *
 * Deadlines share one timer, armed for the earliest one, instead of a timer per
 * request: creating and clearing a Node timer for every call costs more than the rest
 * of a call's bookkeeping. The timer is unref'd: while a request waits, the server's
 * pipes keep the host alive anyway.
 */
export class PendingRequests {
  private readonly byId = new RequestTable<PendingRequest>();
  /**
   * The signals that cancel requests, each with one abort listener however many requests
   * share it (a session's calls share its signal). A listener per request cost 1.5 µs to
   * add and remove, and more with every listener already on the signal: EventTarget walks
   * its list. Only a count per signal: an abort finds its requests among all pending ones,
   * so a request costs no set entry.
   */
  private readonly bySignal = new WeakMap<AbortSignal, SignalGroup>();
  /**
   * The lasting signals that have a group here, weakly: their group stays while no request
   * uses them, and a session nobody holds any more must not be kept by it (a WeakMap
   * above, a WeakRef here, only for the listeners to remove when this session ends).
   */
  private lastingSignals: WeakRef<AbortSignal>[] = [];
  /** Live lasting signals found at the last prune of {@link lastingSignals}. */
  private lastingLive = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  constructor(
    private readonly expired: (request: PendingRequest, why: Expiry) => void,
    /** A request's signal aborted; the request is still pending. */
    private readonly aborted: (request: PendingRequest, signal: AbortSignal) => void,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  add(request: PendingRequest): void {
    this.byId.add(request);
    this.arm(Math.min(request.deadline, request.totalDeadline));
    const signal = request.signal;
    if (!signal) return;
    let group = this.bySignal.get(signal);
    if (!group) {
      group = { count: 0, first: undefined, onAbort: () => this.abort(signal) };
      this.bySignal.set(signal, group);
      signal.addEventListener('abort', group.onAbort, { once: true });
      if (lasting.has(signal)) this.rememberLasting(signal);
    }
    if (group.count++ === 0) group.first = request;
  }

  /** The pending requests, oldest first: a copy. */
  values(): PendingRequest[] {
    return this.byId.values();
  }

  get(id: unknown): PendingRequest | undefined {
    // Exactly as sent: every id and progress token of ours is a number, and "0x7", [7] or true is none of them.
    return typeof id === 'number' ? this.byId.get(id) : undefined;
  }

  /** Removes the request and cleans up after it; undefined if it had already settled. */
  take(id: unknown): PendingRequest | undefined {
    const request = this.get(id);
    if (!request) return undefined;
    this.byId.delete(request);
    const signal = request.signal;
    const group = signal && this.bySignal.get(signal);
    if (group) {
      if (group.first === request) group.first = undefined;
      if (--group.count === 0 && !lasting.has(signal!)) this.forget(signal!, group);
    }
    return request;
  }

  /** Rejects every request at once, each with the error `errorFor` builds for it. */
  rejectAll(errorFor: (request: PendingRequest) => McpError): void {
    for (const { id } of this.byId.values()) {
      const request = this.take(id);
      if (request) fail(request, errorFor(request));
    }
    // Only lasting signals' groups are left, all empty now.
    for (const ref of this.lastingSignals) {
      const signal = ref.deref();
      const group = signal && this.bySignal.get(signal);
      if (group) this.forget(signal!, group);
    }
    this.lastingSignals = [];
    this.lastingLive = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
  }

  /**
   * The requests of an aborted signal are cancelled: the one that made its group at once,
   * several (a session's) found among all pending ones, once per signal.
   */
  private abort(signal: AbortSignal): void {
    const group = this.bySignal.get(signal);
    if (group?.count === 1 && group.first) this.aborted(group.first, signal);
    else if (group && group.count > 0) {
      const stopped: PendingRequest[] = [];
      for (const request of this.byId.values()) if (request.signal === signal) stopped.push(request);
      for (const request of stopped) this.aborted(request, signal);
    }
    this.bySignal.delete(signal);
  }

  /** Notes a lasting signal's group, dropping the notes of signals collected since (amortized: once the list doubles). */
  private rememberLasting(signal: AbortSignal): void {
    this.lastingSignals.push(new WeakRef(signal));
    if (this.lastingSignals.length < 2 * this.lastingLive + 16) return;
    this.lastingSignals = this.lastingSignals.filter((ref) => ref.deref() !== undefined);
    this.lastingLive = this.lastingSignals.length;
  }

  private forget(signal: AbortSignal, group: SignalGroup): void {
    this.bySignal.delete(signal);
    signal.removeEventListener('abort', group.onAbort);
  }

  /** Makes the timer fire no later than `deadline`; a later one it already covers. */
  private arm(deadline: number): void {
    if (deadline >= this.armedFor) return;
    clearTimeout(this.timer);
    this.armedFor = deadline;
    // Node caps a delay at 2^31 - 1 ms; a longer one fires early, finds nothing due, and re-arms.
    this.timer = setTimeout(this.sweep, Math.min(2 ** 31 - 1, Math.max(0, deadline - performance.now()))).unref();
  }

  /** Expires what is due, then arms for the earliest deadline left. */
  private readonly sweep = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const request of this.byId.values()) {
      if (request.totalDeadline <= now) this.expired(request, 'total');
      else if (request.deadline <= now) this.expired(request, 'timeout');
      else next = Math.min(next, request.deadline, request.totalDeadline);
    }
    // An expired request may still be here if the callback did not take it; never spin on it.
    if (next < Infinity) this.arm(next);
  };
}
