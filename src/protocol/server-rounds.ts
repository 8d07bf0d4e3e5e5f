import { McpError } from '../errors.js';
import { mustBe } from '../util/check.js';
import type { Progress } from './types.js';
import { INVALID_PARAMS, rpcFailure } from './rpc-errors.js';
import { asInputRequired } from './server.js';
import { nodeCrypto } from '../util/lazy-builtins.js';

/** One question a backend asked during a call, waiting for the client's answer. */
interface Question {
  method: string;
  params: unknown;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

/** What a round of a pending call came to. */
export type RoundOutcome =
  | { kind: 'done'; result: Record<string, unknown> }
  | { kind: 'input'; inputRequests: Record<string, { method: string; params: unknown }> };

/**
 * A backend call of a 2026-era client that is waiting on the client: its questions
 * (elicitation, sampling) are asked as the gateway's own `input_required` rounds. The call
 * keeps running between rounds; each retry of the client takes up the same call.
 */
export class PendingCall {
  /** Aborting it cancels the backend call. */
  readonly controller = new AbortController();
  /** The current round's progress sink (each round is a new request, maybe on a new connection). */
  progress: ((progress: Progress) => void) | undefined;
  private readonly open = new Map<string, Question>();
  private nextKey = 0;
  private wake: (() => void) | undefined;
  private outcome: { ok: true; result: Record<string, unknown> } | { ok: false; error: unknown } | undefined;

  constructor(
    /** What was asked (`tools/call "x"`): a retry must ask the same. */
    readonly label: string,
    /** The long-lived connection the call came on, whose end ends it; none for a stateless one. */
    readonly owner?: object,
  ) {}

  /** Runs the backend call, once; its questions come through {@link ask}. */
  start(run: (signal: AbortSignal, onProgress: (progress: Progress) => void) => Promise<Record<string, unknown>>): void {
    run(this.controller.signal, (p) => this.progress?.(p)).then(
      (result) => this.settle({ ok: true, result }),
      (error: unknown) => this.settle({ ok: false, error }),
    );
  }

  /** A backend's question: resolves with the client's answer, rejects when `signal` aborts or the call ends. */
  ask(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const key = `q${++this.nextKey}`;
      const onAbort = () => {
        this.open.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const done = () => signal.removeEventListener('abort', onAbort);
      this.open.set(key, {
        method,
        params,
        resolve: (answer) => (done(), resolve(answer)),
        reject: (error) => (done(), reject(error)),
      });
      this.wake?.();
    });
  }

  /** Hands the client's answers to the questions they name; a question left unanswered is asked again. */
  answer(responses: Record<string, unknown>): void {
    for (const [key, answer] of Object.entries(responses)) {
      const question = this.open.get(key);
      if (!question) continue;
      this.open.delete(key);
      question.resolve(answer);
    }
  }

  /**
   * Waits until the call ends (its result, or its error thrown) or has questions open (all
   * the ones asked together). `signal` is the round's request: its abort cancels the call.
   */
  async next(signal: AbortSignal): Promise<RoundOutcome> {
    const onAbort = () => this.cancel(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (this.outcome) {
          if (this.outcome.ok) return { kind: 'done', result: this.outcome.result };
          throw this.outcome.error;
        }
        if (this.open.size > 0) {
          // Questions asked at once (a 2026 backend's round) arrive a few ticks apart: ask them together.
          await new Promise((resolve) => setImmediate(resolve));
          if (this.outcome) continue;
          const inputRequests: Record<string, { method: string; params: unknown }> = {};
          for (const [key, { method, params }] of this.open) inputRequests[key] = { method, params };
          if (this.open.size > 0) return { kind: 'input', inputRequests };
          continue;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Ends the call: the backend call is cancelled, open questions reject. Idempotent. */
  cancel(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    for (const question of this.open.values()) question.reject(reason);
    this.open.clear();
  }

  private settle(outcome: NonNullable<PendingCall['outcome']>): void {
    this.outcome = outcome;
    for (const question of this.open.values()) question.reject(new McpError('cancelled', 'the call ended before the question was answered'));
    this.open.clear();
    this.wake?.();
  }
}

/**
 * The gateway's pending calls between rounds, by `requestState`: an unguessable id, new for
 * each round and good once, so a round cannot be replayed. A call the client does not
 * come back to within `lifetimeMs` is cancelled and forgotten.
 */
export class InputRounds {
  private readonly parked = new Map<string, { call: PendingCall; timer: NodeJS.Timeout }>();
  private closed = false;

  /** `newState`: how a `requestState` is made (in a cluster, sealed so any member routes the retry here). */
  constructor(
    readonly lifetimeMs: number,
    private readonly newState: (lifetimeMs: number) => string = () => nodeCrypto().randomBytes(24).toString('base64url'),
  ) {}

  get size(): number {
    return this.parked.size;
  }

  /** Keeps `call` until the client's retry; returns the `requestState` that retry must carry. */
  park(call: PendingCall): string {
    const state = this.newState(this.lifetimeMs);
    if (this.closed) {
      call.cancel(new McpError('closed', 'the gateway was closed'));
      return state;
    }
    const timer = setTimeout(() => {
      this.parked.delete(state);
      call.cancel(new McpError('timeout', `the client did not answer the input request within ${this.lifetimeMs} ms`));
    }, this.lifetimeMs);
    timer.unref();
    this.parked.set(state, { call, timer });
    return state;
  }

  /** The call a retry's `requestState` names, taken out (its id is spent); undefined when unknown or expired. */
  take(state: string): PendingCall | undefined {
    const entry = this.parked.get(state);
    if (!entry) return undefined;
    this.parked.delete(state);
    clearTimeout(entry.timer);
    return entry.call;
  }

  /**
   * One round of a call that may ask: its result when it ends, else (marked for
   * {@link asInputRequired}) its open questions and the `requestState` naming it for the
   * client's retry. `signal` is the round's request: its abort cancels the call.
   */
  async round(call: PendingCall, signal: AbortSignal, onProgress: ((progress: Progress) => void) | undefined): Promise<Record<string, unknown>> {
    call.progress = onProgress;
    try {
      const outcome = await call.next(signal);
      if (outcome.kind === 'done') return outcome.result;
      return asInputRequired({ inputRequests: outcome.inputRequests, requestState: this.park(call) });
    } finally {
      call.progress = undefined;
    }
  }

  /** A client's retry of the request `label` names: its answers go to the call's waiting questions; then {@link round} again. */
  resume(label: string, params: Record<string, unknown>): PendingCall {
    const { requestState, inputResponses } = params;
    const call = typeof requestState === 'string' ? this.take(requestState) : undefined;
    if (!call) {
      throw rpcFailure(
        INVALID_PARAMS,
        `${label}: the requestState is unknown or expired (a round is kept ${this.lifetimeMs} ms, once, by the gateway that issued it); send the request again without requestState`,
        { code: 'invalid-arguments', field: 'requestState' },
      );
    }
    const fail = (why: string) => {
      call.cancel(new McpError('cancelled', why));
      return rpcFailure(INVALID_PARAMS, why);
    };
    if (call.label !== label) throw fail(`${label}: the requestState belongs to ${call.label}`);
    if (inputResponses !== undefined && (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))) {
      throw fail(`${label}: ${mustBe('inputResponses', 'an object keyed by the input requests', inputResponses)}`);
    }
    call.answer((inputResponses ?? {}) as Record<string, unknown>);
    return call;
  }

  /** Cancels the parked calls of a connection that ended. */
  dropOwned(owner: object): void {
    for (const [state, { call, timer }] of this.parked) {
      if (call.owner !== owner) continue;
      this.parked.delete(state);
      clearTimeout(timer);
      call.cancel(new McpError('closed', 'the client connection ended'));
    }
  }

  /** Cancels every parked call. Idempotent. */
  close(): void {
    this.closed = true;
    for (const { call, timer } of this.parked.values()) {
      clearTimeout(timer);
      call.cancel(new McpError('closed', 'the gateway was closed'));
    }
    this.parked.clear();
  }
}
