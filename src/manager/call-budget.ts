import { McpError, serverLabel } from '../errors.js';
import type { CallOptions } from '../protocol/types.js';
import { abortable } from './abortable.js';

/**
 * What is left of one call's `timeout` and `maxTotalTimeout`, counted from when the call
 * began, so that they cover everything the call waits for, a server start included. A
 * call without either waits for a start as long as the start's own deadline (the
 * server's `timeout` for its handshake) allows.
 */
export class CallBudget {
  private readonly began = performance.now();

  constructor(private readonly options: CallOptions) {}

  /** The ms the call still has before it must have its answer; Infinity when it set no bound. */
  get leftMs(): number {
    return Math.min(bound(this.options.timeout), bound(this.options.maxTotalTimeout)) - this.elapsed;
  }

  /**
   * Waits for `work` (such as a start other callers share) no longer than the call's
   * budget and signal allow. Only this wait ends; the work goes on.
   */
  wait<T>(work: Promise<T>, what: string, server?: string): Promise<T> {
    const waited = abortable(work, this.options.signal, what, server);
    const left = this.leftMs;
    if (left === Infinity) return waited;
    const limit = Math.min(bound(this.options.timeout), bound(this.options.maxTotalTimeout));
    // Made before the timer starts so its stack points at the caller.
    const timedOut = new McpError(
      'timeout',
      `${server === undefined ? '' : serverLabel(server)}${what} timed out after ${limit} ms`,
      { ...(server === undefined ? {} : { server }) },
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut), Math.max(0, left));
    });
    return Promise.race([waited, deadline]).finally(() => clearTimeout(timer));
  }

  /**
   * The call's options for the request itself, with its time-outs less the time already
   * spent waiting. A progress notification restarts the request's timer at that
   * remainder, not at the whole `timeout`.
   */
  rest(): CallOptions {
    const { timeout, maxTotalTimeout } = this.options;
    if (!isBound(timeout) && !isBound(maxTotalTimeout)) return this.options;
    const elapsed = this.elapsed;
    if (elapsed <= 0) return this.options;
    return {
      ...this.options,
      ...(isBound(timeout) ? { timeout: Math.max(1, Math.ceil(timeout - elapsed)) } : {}),
      ...(isBound(maxTotalTimeout) ? { maxTotalTimeout: Math.max(1, Math.ceil(maxTotalTimeout - elapsed)) } : {}),
    };
  }

  /**
   * A request's time-out, told against the call's whole budget: the request only had what
   * the wait for a start left it, but the caller set the call's `timeout`.
   */
  explain(error: unknown): unknown {
    if (!(error instanceof McpError) || error.code !== 'timeout') return error;
    // "… in total" is the request's maxTotalTimeout running out; otherwise its timeout (reset by progress).
    const limit = / in total\b/.test(error.message) ? bound(this.options.maxTotalTimeout) : bound(this.options.timeout);
    if (limit === Infinity) return error;
    const message = error.message.replace(/timed out after \d+ ms/, `timed out after ${limit} ms`);
    if (message === error.message) return error;
    const { server, phase, stderrTail } = error;
    return new McpError('timeout', message, { server, phase, stderrTail, cause: error.cause });
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
