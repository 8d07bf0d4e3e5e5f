import type { z } from 'zod';
import type { McpPhase } from '../../errors.js';
import type { ListMethod, RequestOptions, RequestScope } from '../client-options.js';
import type { RequestEngine } from '../engine/engine.js';
import type { RequestFinish } from '../engine/pending-requests.js';
import type { HostRequests } from '../host-requests.js';
import type { Label } from '../session-errors.js';
import type { CacheHints } from '../types.js';
import { cacheHintsOf, combineCacheHints, decodeModernResult, MAX_INPUT_ROUNDS, type ModernResult, tooManyRounds, withEnvelope } from './modern.js';

/**
 * One 2026 request: what each of its rounds is sent with, and the finish of its first
 * round, which reads the answer where the engine settles it (see {@link RequestFinish}):
 * a request answered in one round (nearly all) so takes no promise layer of its own.
 */
class ModernCall<S extends z.ZodType> implements RequestFinish {
  constructor(
    private readonly requests: ModernRequests,
    /** When the call began (`performance.now()`), for its `maxTotalTimeout`; 0 without one. */
    readonly began: number,
    readonly method: string,
    readonly params: Record<string, unknown>,
    readonly schema: S,
    readonly accepts: ((value: unknown) => boolean) | undefined,
    readonly phase: McpPhase,
    readonly options: RequestOptions,
    readonly label: Label,
    readonly withProgress: boolean | undefined,
    readonly scope: RequestScope,
    /** The caller's own finish (the manager's), run on the call's outcome. */
    private readonly outer: RequestFinish | undefined,
  ) {}

  done(raw: unknown): unknown {
    let result: z.infer<S>;
    try {
      const decoded = decodeModernResult(this.requests.name, this.phase, this.method, raw);
      if (decoded.kind !== 'complete') return this.later(decoded);
      result = this.requests.completed(decoded.result, this);
    } catch (error) {
      return this.failed(error);
    }
    return this.outer ? this.outer.done(result) : result;
  }

  /** The rounds after the first, with the caller's finish on their outcome. */
  private later(answered: Extract<ModernResult, { kind: 'input_required' }>): Promise<unknown> {
    const rounds = this.requests.inputRounds(answered, this);
    const outer = this.outer;
    return outer ? rounds.then((result) => outer.done(result), (error: unknown) => outer.failed(error)) : rounds;
  }

  failed(error: unknown): unknown {
    if (this.outer) return this.outer.failed(error);
    throw error;
  }
}

/**
 * The requests of a 2026 session: the `_meta` envelope on each round, the cache hints of
 * listings, and the multi round-trip rounds (`input_required`) answered by the host.
 */
export class ModernRequests {
  /**
   * The cache hints (`ttlMs`, `cacheScope`) of the last listing by each list method: across
   * its pages, the shortest lifetime, private if any page was.
   */
  readonly lastCacheHints: Partial<Record<ListMethod, Required<CacheHints>>> = {};

  constructor(
    private readonly engine: RequestEngine,
    private readonly host: HostRequests,
    readonly name: string | undefined,
    /** Aborted when the session ends: stops host handlers still answering for it. */
    private readonly ended: AbortSignal,
  ) {}

  /**
   * A 2026 request: each round carries the `_meta` envelope; an `input_required` answer is
   * answered with the calling request's own handlers and the request sent again on a fresh
   * id with `inputResponses` and the `requestState` exactly as received. `finish`, the
   * caller's, runs on the outcome of the last round.
   */
  call<S extends z.ZodType>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    accepts: ((value: unknown) => boolean) | undefined,
    phase: McpPhase,
    options: RequestOptions,
    label: Label,
    withProgress: boolean | undefined,
    scope: RequestScope,
    finish: RequestFinish | undefined,
  ): Promise<z.infer<S>> {
    // Only a later round's maxTotalTimeout needs the call's start: no clock read for the rest.
    const began = options.maxTotalTimeout === undefined ? 0 : (options.startedAt ?? performance.now());
    const call = new ModernCall(this, began, method, params, schema, accepts, phase, options, label, withProgress, scope, finish);
    // The envelope is a fresh copy: the engine may add the progress token to it in place.
    const request = { method, params: withEnvelope(params, this.host.clientInfo, this.host.requestCapabilities(scope)), phase, label, withProgress, ownsParams: true, scope, finish: call };
    return this.engine.request(request, options);
  }

  /** A complete 2026 result: the cache hints of a listing kept, then read by the call's schema. */
  completed<S extends z.ZodType>(result: Record<string, unknown>, call: ModernCall<S>): z.infer<S> {
    const { method, params, schema, accepts, label, phase } = call;
    if (method.endsWith('/list')) {
      // A listing's later pages narrow what its first page said.
      const hints = cacheHintsOf(result);
      const first = !('cursor' in params);
      const known = this.lastCacheHints[method as ListMethod];
      this.lastCacheHints[method as ListMethod] = first || !known ? hints : combineCacheHints(known, hints);
    }
    if (accepts?.(result)) return result as z.infer<S>;
    const parsed = schema.safeParse(result);
    if (!parsed.success) throw this.engine.errors.fromIssues({ label, phase }, parsed.error);
    return parsed.data;
  }

  /** The rounds after an `input_required` answer, until a complete result (see {@link call}). */
  async inputRounds<S extends z.ZodType>(answered: Extract<ModernResult, { kind: 'input_required' }>, call: ModernCall<S>): Promise<z.infer<S>> {
    const { began, method, params, phase, options, label, withProgress, scope } = call;
    let decoded: ModernResult = answered;
    for (let round = 1; ; round++) {
      if (decoded.kind === 'complete') return this.completed(decoded.result, call);
      if (round >= MAX_INPUT_ROUNDS) throw tooManyRounds(this.name, phase, label);
      const inputs = Object.entries(decoded.inputRequests);
      for (const [, input] of inputs) {
        const missing = this.host.missingInputHandler(input.method, scope, label, phase);
        if (missing) throw missing;
      }
      const inputResponses: Record<string, unknown> = {};
      // The handlers may wait on a person: they stop when the call is aborted or the session
      // ends. Linked by hand: AbortSignal.any leaks on a long-lived signal in Node 20.
      const stop = new AbortController();
      const onStop = () => stop.abort(options.signal?.aborted ? options.signal.reason : this.ended.reason);
      if (options.signal?.aborted || this.ended.aborted) onStop();
      options.signal?.addEventListener('abort', onStop, { once: true });
      this.ended.addEventListener('abort', onStop, { once: true });
      try {
        const answering = Promise.all(
          inputs.map(async ([key, input]) => {
            try {
              inputResponses[key] = await this.host.answer(input.method, input.params, scope, stop.signal);
            } catch (error) {
              throw this.host.handlerFailed(error, input.method, label, phase);
            }
          }),
        );
        await this.unlessStopped(answering, stop.signal, { label, phase }, options.signal);
      } catch (error) {
        // One failed answer fails the call: the handlers still waiting (on a person, maybe) are stopped.
        stop.abort(error);
        throw error;
      } finally {
        options.signal?.removeEventListener('abort', onStop);
        this.ended.removeEventListener('abort', onStop);
      }
      const retry = { inputResponses, ...(decoded.requestState === undefined ? {} : { requestState: decoded.requestState }) };
      // A later round is a new request: its `timeout` counts from its sending, `maxTotalTimeout` from the call's start.
      const total = options.maxTotalTimeout;
      const roundOptions = { ...options, startedAt: undefined, ...(total === undefined ? {} : { maxTotalTimeout: Math.max(0, total - (performance.now() - began)) }) };
      const sent = withEnvelope({ ...params, ...retry }, this.host.clientInfo, this.host.requestCapabilities(call.scope));
      const raw = await this.engine.request({ method, params: sent, phase, label, withProgress, ownsParams: true, scope }, roundOptions);
      decoded = decodeModernResult(this.name, phase, method, raw);
    }
  }

  /** Waits for `work` unless `signal` aborts first: then rejects with `cancelled` (the call's signal) or the session's end. */
  private async unlessStopped(work: Promise<unknown>, signal: AbortSignal, request: { label: Label; phase: McpPhase }, callSignal: AbortSignal | undefined): Promise<void> {
    const stopped = () =>
      callSignal?.aborted ? this.engine.errors.cancelled(request, callSignal) : this.engine.errors.forRequest(this.engine.closedReason ?? this.engine.errors.closed(), request);
    if (signal.aborted) throw stopped();
    work.catch(() => undefined);
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(stopped());
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }
}
