import { McpError, serverLabel } from '../../errors.js';
import type { McpClient } from '../../protocol/client.js';
import { refused } from '../../protocol/engine/pending-requests.js';
import type { CallOptions } from '../../protocol/types.js';
import { CallBudget } from '../call/call-budget.js';
import { TOOL_ERROR, type TraceHandle } from '../telemetry/tracing.js';
import type { RunnableEntry } from './channel-factory.js';
import type { RequestLabel, Send, SlotRequest } from './slot-host.js';
import { SlotMachine } from './slot-machine.js';
import { lostAuthorization, SlotSettle } from './slot-settle.js';
import { hinted } from './slot-start.js';

export { BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_FAILED_STARTS, type ServerState, type ServerStatus } from './slot-state.js';
export type { RequestLabel, SlotHost, SlotRequest } from './slot-host.js';

/**
 * One configured server: its {@link SlotMachine} (state, start, stop, restart, shutdown)
 * and the requests it runs. The call path is here: a request on a running server goes
 * straight to its client, counted for metrics, spans and idle stop; one waiting for a
 * start shares the start and keeps the rest of its time budget.
 */
export class ServerSlot extends SlotMachine {
  /** Progress on a request is activity too: restarts the idle timer (one function for every call). */
  private readonly touch = (): void => void this.idleTimer?.refresh();

  /**
   * Runs one request against the server, counting it as activity for idle stop. The
   * call's `timeout` and `maxTotalTimeout` (in `options`) cover the wait for a start too;
   * the request is sent with the options counting from the call's start (`startedAt`),
   * and `touch` to call on progress, which is activity too.
   */
  run<T, R = T>(request: SlotRequest<T, R> | Send<T>, options: CallOptions = {}, label?: RequestLabel): Promise<R> {
    const began = this.host.metrics.begin();
    // A caller waiting for a start counts as activity too: a drain (reload) must not pull the server from under it.
    this.active++;
    clearTimeout(this.idleTimer);
    const call: SlotRequest<T, R> = typeof request === 'function' ? { send: request } : request;
    const client = this.current.client;
    // No async frame on the way to a running server: each would cost every call a promise and more microtask turns.
    return client ? this.send(client, call, options, label, began, false) : this.sendAfterStart(call, options, label, began);
  }

  private async sendAfterStart<T, R>(request: SlotRequest<T, R>, options: CallOptions, label: RequestLabel | undefined, began: number): Promise<R> {
    let client: McpClient;
    let left: CallOptions;
    this.waiting.add(request);
    try {
      const budget = new CallBudget(options);
      // Aborting or running out of time stops this caller's wait for a start, not the start others share.
      client = await budget.wait(this.ready(), 'waiting for the server to start', this.name).catch((error: unknown) => {
        const state = this.current;
        throw state.name === 'starting' ? hinted(this.entry as RunnableEntry, error, state.silent) : error;
      });
      left = budget.rest();
    } catch (error) {
      const reported = this.requestFailed(undefined, error, began, undefined);
      if (request.failed) return request.failed(reported);
      throw reported;
    } finally {
      this.waiting.delete(request);
    }
    return this.send(client, request, left, label, began, true);
  }

  /** Sends `request` on a ready client; the slot's counters settle with its answer, then the caller's outcome is made. */
  private send<T, R>(client: McpClient, request: SlotRequest<T, R>, options: CallOptions, label: RequestLabel | undefined, began: number, waited: boolean): Promise<R> {
    const span = label ? this.requestSpan(client, label, began) : undefined;
    const settle = new SlotSettle(this, request, client, began, span);
    let answer: Promise<T>;
    try {
      answer = request.send(client, this.touch, options, waited, request.handsOn ? settle : undefined);
    } catch (error) {
      return refused<R>(error, settle);
    }
    if (request.handsOn) return answer as unknown as Promise<R>;
    return answer.then(
      (result) => settle.done(result),
      (error: unknown) => settle.failed(error),
    );
  }

  /**
   * The span of a request from its sending on (a start it waited for has its own), when a
   * tracer listens. A tracer that throws costs the request its span, never the request. No
   * object spread here: on Node 20 `{ ...label, more }` takes V8's slow path (~1 µs a property).
   */
  private requestSpan(client: McpClient, label: RequestLabel, began: number): TraceHandle | undefined {
    const tracing = this.host.tracing;
    if (!tracing) return undefined;
    try {
      if (!tracing.listened(began)) return undefined;
      return tracing.request({
        method: label.method,
        target: label.target,
        resourceUri: label.resourceUri,
        server: this.name,
        transport: client.transport,
        protocolVersion: client.protocolVersion,
      });
    } catch {
      return undefined;
    }
  }

  /** Counts a request that succeeded. */
  requestSucceeded(began: number, span: TraceHandle | undefined, result: unknown): void {
    try {
      this.host.metrics.end(began);
      span?.end((result as { isError?: unknown } | undefined)?.isError === true ? TOOL_ERROR : undefined);
    } catch {
      // A tracer's failure must not keep the request counted as in flight.
    } finally {
      this.requestEnded();
    }
  }

  /** Counts a failed request and gives the error its caller gets. */
  requestFailed(client: McpClient | undefined, error: unknown, began: number, span: TraceHandle | undefined): unknown {
    if (client && lostAuthorization(error) && this.current.client === client && !this.op) this.lostAuth(client, error as McpError);
    const reported = client ? this.fromOldConnection(client, error) : error;
    const failure = reported instanceof McpError ? reported : undefined;
    try {
      this.host.metrics.end(began, failure?.code ?? 'protocol-error');
      span?.end(failure);
    } catch {
      // As in requestSucceeded.
    } finally {
      this.requestEnded();
    }
    return reported;
  }

  private requestEnded(): void {
    this.relist.soon();
    this.active--;
    this.armIdle();
    if (this.active === 0) this.onIdle?.();
  }

  /** A request that failed because the slot closed its connection for a restart is `unavailable`, not `closed`. */
  private fromOldConnection(client: McpClient, error: unknown): unknown {
    const why = this.retired.get(client);
    if (why === undefined || why === 'shutdown' || !(error instanceof McpError) || error.code !== 'closed') return error;
    const what = why === 'idle' ? 'stopped for being idle' : 'restarted';
    return new McpError('unavailable', `${serverLabel(this.name)}the server was ${what} while the request was in flight; try again`, {
      server: this.name,
      ...(error.phase === undefined ? {} : { phase: error.phase }),
      cause: error,
    });
  }
}
