import { McpError } from '../../errors.js';
import type { McpClient } from '../../protocol/client.js';
import type { RequestFinish } from '../../protocol/engine/pending-requests.js';
import type { TraceHandle } from '../telemetry/tracing.js';
import type { SlotRequest } from './slot-host.js';

/** What a request's end reports to its slot. */
export interface SettleSite {
  requestSucceeded(began: number, span: TraceHandle | undefined, result: unknown): void;
  requestFailed(client: McpClient | undefined, error: unknown, began: number, span: TraceHandle | undefined): unknown;
}

/**
 * The end of one request a slot runs: the slot counts it, then the request makes its
 * caller's outcome. One object per request, given to the engine as the request's finish
 * (no promise layer) or used by the slot's own `then`.
 */
export class SlotSettle<T, R> implements RequestFinish {
  constructor(
    private readonly slot: SettleSite,
    private readonly request: SlotRequest<T, R>,
    private readonly client: McpClient,
    private readonly began: number,
    private readonly span: TraceHandle | undefined,
  ) {}

  /** The request's outcome is counted only once the caller's is known: a result its checks refuse is a failure. */
  done(result: unknown): R | Promise<R> {
    const request = this.request;
    let outcome: R | Promise<R>;
    try {
      request.check?.(result as T);
      outcome = request.done ? request.done(result as T) : (result as R);
    } catch (error) {
      return this.failed(error);
    }
    if (outcome instanceof Promise) return outcome.then((value) => this.succeeded(result, value), (error: unknown) => this.failed(error));
    return this.succeeded(result, outcome);
  }

  private succeeded(result: unknown, value: R): R {
    this.slot.requestSucceeded(this.began, this.span, result);
    return value;
  }

  failed(error: unknown): R | Promise<R> {
    const reported = this.slot.requestFailed(this.client, error, this.began, this.span);
    if (this.request.failed) return this.request.failed(reported);
    throw reported;
  }
}

/**
 * Whether a request failed because the server no longer takes the tokens (401 after a
 * refused refresh). A 403 asking for more scope is that one call's failure: the token
 * still serves the rest.
 */
export function lostAuthorization(error: unknown): boolean {
  if (!(error instanceof McpError) || error.code !== 'auth-required') return false;
  const status = error.status ?? (error.cause instanceof McpError ? error.cause.status : undefined);
  return status !== 403;
}
