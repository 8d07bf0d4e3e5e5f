import { McpError, serverLabel } from '../../errors.js';
import { copyWith } from '../../util/copy-with.js';
import type { CallOptions } from '../../protocol/types.js';
import { abortable, bounded } from '../../util/deadline.js';

/**
 * What is left of one call's `timeout` and `maxTotalTimeout`, counted from when the call
 * began, so that they cover everything the call waits for, a server start included. A
 * call without either waits for a start as long as the start's own deadline (the
 * server's `timeout` for its handshake) allows.
 */
export class CallBudget {
  /** When the call began: a budget made within another (a slot's within the manager's) counts from the outer one's start. */
  private readonly began: number;

  constructor(private readonly options: CallOptions) {
    const outer = options.startedAt;
    this.began = outer !== undefined && Number.isFinite(outer) ? Math.min(outer, performance.now()) : performance.now();
  }

  /** The ms the call still has before it must have its answer; Infinity when it set no bound. */
  get leftMs(): number {
    return Math.min(bound(this.options.timeout), bound(this.options.maxTotalTimeout)) - this.elapsed;
  }

  /**
   * Waits for `work` (such as a start other callers share) no longer than the call's
   * budget and signal allow. Only this wait ends; the work goes on.
   */
  wait<T>(work: Promise<T>, what: string, server?: string): Promise<T> {
    const left = this.leftMs;
    const { signal } = this.options;
    if (left === Infinity) return abortable(work, signal, what, server);
    const limit = Math.min(bound(this.options.timeout), bound(this.options.maxTotalTimeout));
    const timedOut = new McpError('timeout', `${serverLabel(server)}${what} timed out after ${limit} ms`, { ...(server === undefined ? {} : { server }) });
    return bounded(work, { ms: left, timedOut, signal, what, server });
  }

  /**
   * The call's options for the request itself: its time-outs count from when the call
   * began (`startedAt`), so the request has what the wait left it. Its time-out tells the
   * caller's own `timeout`, and progress restarts that whole `timeout`.
   */
  rest(): CallOptions {
    const { timeout, maxTotalTimeout, startedAt } = this.options;
    if ((!isBound(timeout) && !isBound(maxTotalTimeout)) || startedAt === this.began) return this.options;
    return copyWith(this.options, 'startedAt', this.began);
  }

  private get elapsed(): number {
    return performance.now() - this.began;
  }
}

/** A usable finite bound; anything else (unset, Infinity, or invalid, which the request itself rejects) is no bound here. */
function isBound(ms: number | undefined): ms is number {
  return typeof ms === 'number' && ms >= 0 && Number.isFinite(ms);
}

function bound(ms: number | undefined): number {
  return isBound(ms) ? ms : Infinity;
}
