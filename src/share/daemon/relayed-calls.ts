import { McpError } from '../../errors.js';
import { askingHandlers } from '../../protocol/asking-handlers.js';
import { type InputRounds, PendingCall } from '../../protocol/server-rounds.js';
import type { RequestScope } from '../../protocol/client-options.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../protocol/engine/json-depth.js';
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '../../protocol/eras/modern.js';
import { ALL_PROTOCOL_VERSIONS, type HostHandlers, type HostRequestContext, MODERN_PROTOCOL_VERSION, type Root } from '../../protocol/types.js';
import type { Channel, JsonRpcMessage, RequestId } from '../../transport/channel.js';
import { INTERNAL_ERROR } from '../../transport/mcp-constants.js';
import type { CallRelay } from './call-relay.js';
import { toWire } from './wire.js';

/** What the relayed calls need of their session. */
export interface RelayingSession {
  /** The session's relay to its server, while the server runs and has one. */
  relay(): CallRelay | undefined;
  /** Whether the session still answers. */
  readonly isOpen: boolean;
  /** Legacy link: the caller its calls name (the long path's too), so a question finds it among them. */
  readonly caller: object;
  /** Legacy link: the session's handlers of the server's questions (they ask the client, related to the call). */
  readonly handlers: HostHandlers;
  /** 2026 link: the parked calls of the session's `input_required` rounds. */
  readonly rounds: InputRounds;
  /** Tells the client a progress notification about its call. */
  progress(params: Record<string, unknown>): void;
  /** A 2026 result: its `resultType` and the server's identity. */
  enveloped(result: Record<string, unknown>): Record<string, unknown>;
  /** The roots a 2026 call's server is offered (no client is asked in that era). */
  roots(): Root[];
  /** The answer for a call that failed on the daemon's side. */
  asRpc(error: unknown): McpError;
}

/** One call of the client's in flight on the short path. */
interface Passed {
  readonly clientId: RequestId;
  readonly serverId: number;
  /** The object a question's context names (`toolCall.arguments`): which call it is about. */
  readonly args: object;
  /** 2026 link, once the server asked: the call runs as a pending call of `input_required` rounds. */
  pending?: { call: PendingCall; settle(answer: { result?: unknown; error?: unknown }): void; round: AbortController };
  /** Aborted when the call is over: a question about it (asked of the client) stops then. */
  over?: AbortController;
}

/**
 * A session's tool calls on the short path to a running legacy-era server: the client's
 * `tools/call` goes to the server as it is (see {@link CallRelay}) and the server's answer
 * comes back to the client under the client's id, with no request handler, promise or
 * abort signal per call on the daemon. What the session promises holds as on the long
 * path: progress reaches the client by its token, its `notifications/cancelled` cancels
 * the server's call, a question of the server's about the call reaches this client
 * only (legacy link: asked related to the call; 2026 link: the call turns into a pending
 * call, and the client is answered `input_required`), and the session's end cancels
 * its calls. Calls the short path does not take (the server not running yet, a 2026
 * server, a retry with `requestState`) go to the request engine.
 */
export class RelayedCalls {
  private readonly byClientId = new Map<RequestId, Passed>();
  /** 2026 link, for calls whose client did not declare what could be asked: nothing is asked. */
  private quiet: HostHandlers | undefined;

  constructor(
    private readonly session: RelayingSession,
    private readonly channel: Channel,
    /** The session's calls by their arguments object (a question's `toolCall.arguments`): shared with its long path. */
    private readonly callsByArgs: Map<object, RequestId>,
  ) {}

  /** Whether the client's message was a message of the short path (then it is handled). */
  take(m: Record<string, unknown>): boolean {
    if (m.method === 'tools/call') return this.call(m);
    if (m.method === 'notifications/cancelled' && this.byClientId.size > 0) {
      const requestId = (m.params as { requestId?: unknown } | undefined)?.requestId;
      const passed = typeof requestId === 'number' || typeof requestId === 'string' ? this.byClientId.get(requestId) : undefined;
      if (!passed) return false;
      // A call in its first round: the round ends, which cancels the call (and the server's).
      if (passed.pending) passed.pending.round.abort(new McpError('cancelled', 'the peer cancelled the request'));
      else this.end(passed, 'the client cancelled the call');
      return true;
    }
    return false;
  }

  /** A question of the server's about the client's call `clientId`: a signal that aborts when that call is over, if it runs here. */
  overSignal(clientId: RequestId): AbortSignal | undefined {
    const passed = this.byClientId.get(clientId);
    return passed ? (passed.over ??= new AbortController()).signal : undefined;
  }

  /** The session ended: every call of its is cancelled at the server. */
  close(): void {
    for (const passed of [...this.byClientId.values()]) this.end(passed, 'the client went away');
  }

  private call(m: Record<string, unknown>): boolean {
    const id = m.id;
    const relay = this.session.relay();
    if (!relay?.isOpen || !this.session.isOpen || (typeof id !== 'number' && typeof id !== 'string') || this.byClientId.has(id)) return false;
    const params = m.params as Record<string, unknown> | undefined;
    if (typeof params !== 'object' || params === null || typeof params.name !== 'string' || params.requestState !== undefined) return false;
    const args = params.arguments ?? {};
    if (typeof args !== 'object' || args === null) return false;
    const meta = params._meta as Record<string, unknown> | undefined;
    const version = meta?.[PROTOCOL_VERSION_META_KEY];
    // An unknown revision is refused by the long path, which says so.
    if (version !== undefined && version !== MODERN_PROTOCOL_VERSION && !(ALL_PROTOCOL_VERSIONS as readonly unknown[]).includes(version)) return false;
    const modern = version === MODERN_PROTOCOL_VERSION;
    const token = meta?.progressToken;
    const passed: Passed = { clientId: id, serverId: 0, args };
    const scope = this.scope(passed, params.name, args, modern ? ((meta![CLIENT_CAPABILITIES_META_KEY] ?? {}) as { elicitation?: unknown; sampling?: unknown }) : undefined);
    this.byClientId.set(id, passed);
    this.callsByArgs.set(args, id);
    (passed as { serverId: number }).serverId = relay.send(params.name, args, {
      scope,
      settle: (answer) => {
        if (passed.pending) return passed.pending.settle(answer);
        if (this.byClientId.get(id) !== passed) return;
        this.forget(passed);
        this.answer(id, answer, modern);
      },
      progress: (p) => {
        if ((typeof token === 'string' || typeof token === 'number') && typeof p.progress === 'number') {
          const { progress, total, message } = p;
          this.session.progress({ progressToken: token, progress, ...(typeof total === 'number' ? { total } : {}), ...(typeof message === 'string' ? { message } : {}) });
        }
      },
    });
    return true;
  }

  /**
   * Who the call's questions go to, as on the long path: legacy link, the session (its
   * handlers ask the client, related to the call); 2026 link, the call alone, and only
   * what its client declared (the call becomes a pending call at the first question).
   */
  private scope(passed: Passed, name: string, args: object, declared: { elicitation?: unknown; sampling?: unknown } | undefined): RequestScope {
    const toolCall = { name, arguments: args };
    if (declared === undefined) return { handlers: this.session.handlers, caller: this.session.caller, toolCall };
    const roots = async () => this.session.roots();
    if (declared.elicitation === undefined && declared.sampling === undefined) {
      this.quiet ??= { ...askingHandlers(() => ({}), () => Promise.reject()), roots };
      return { handlers: this.quiet, caller: passed, toolCall };
    }
    const ask = (method: string, request: object, ctx: HostRequestContext) => this.pending(passed, name).call.ask(method, request, ctx.signal);
    return { handlers: { ...askingHandlers(() => declared, ask), roots }, caller: passed, toolCall };
  }

  /**
   * 2026 link: the server asked during the call. The call goes on as a pending call: the
   * client's request is answered with the round's `input_required`, its retry (the long
   * path) takes the call up, and the server's answer ends the call there.
   */
  private pending(passed: Passed, name: string): NonNullable<Passed['pending']> {
    if (passed.pending) return passed.pending;
    const call = new PendingCall(`tools/call ${JSON.stringify(name)}`, this.session);
    let settle: (answer: { result?: unknown; error?: unknown }) => void = () => undefined;
    const round = new AbortController();
    passed.pending = { call, settle: (answer) => settle(answer), round };
    call.start(
      (signal) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          settle = (answer) => {
            this.forget(passed);
            const outcome = this.outcome(answer);
            if ('error' in outcome) reject(new McpError('rpc-error', outcome.error.message, { rpc: outcome.error }));
            else resolve(outcome.result);
          };
          // A round cancelled, timed out or left: the server's call is cancelled.
          signal.addEventListener('abort', () => (this.end(passed, 'the call was cancelled'), reject(signal.reason)), { once: true });
        }),
    );
    const id = passed.clientId;
    // The client's request is over with the round (its id is free again); the call lives on, parked.
    const done = () => this.byClientId.get(id) === passed && this.byClientId.delete(id);
    this.session.rounds.round(call, round.signal, undefined).then(
      (result) => {
        done();
        if (this.session.isOpen && !round.signal.aborted) this.post({ jsonrpc: '2.0', id, result: this.session.enveloped(result) });
      },
      (error: unknown) => {
        done();
        if (!this.session.isOpen || round.signal.aborted) return;
        const rpc = this.session.asRpc(error).rpc!;
        this.post({ jsonrpc: '2.0', id, error: { code: rpc.code, message: rpc.message, ...(rpc.data === undefined ? {} : { data: rpc.data }) } });
      },
    );
    return passed.pending;
  }

  /** The server's answer to the client, under the client's id. */
  private answer(id: RequestId, answer: { result?: unknown; error?: unknown }, modern: boolean): void {
    if (!this.session.isOpen) return;
    const outcome = this.outcome(answer);
    if ('error' in outcome) return this.post({ jsonrpc: '2.0', id, error: outcome.error });
    this.post({ jsonrpc: '2.0', id, result: modern ? this.session.enveloped(outcome.result) : outcome.result });
  }

  /** The answer as the long path would give it: the server's JSON-RPC error as it sent it, a result that is an object (not too deep to send on). */
  private outcome(answer: { result?: unknown; error?: unknown }): { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } } {
    const { result, error } = answer;
    if (error !== undefined && error !== null) {
      const e = (typeof error === 'object' ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
      const deep = nestsDeeperThan(error, MAX_JSON_DEPTH);
      return {
        error: {
          code: typeof e.code === 'number' ? e.code : 0,
          message: typeof e.message === 'string' ? e.message : deep ? '(an error nesting too deep to show)' : JSON.stringify(error),
          ...(e.data === undefined || deep ? {} : { data: e.data }),
        },
      };
    }
    if (typeof result === 'object' && result !== null && !Array.isArray(result) && !nestsDeeperThan(result, MAX_JSON_DEPTH)) return { result: result as Record<string, unknown> };
    const wire = toWire(new McpError('protocol-error', `tools/call: the server's result is not a JSON object of at most ${MAX_JSON_DEPTH} levels`, {}));
    return { error: { code: INTERNAL_ERROR, message: wire.message, data: { 'lazy-mcp/error': wire } } };
  }

  private post(message: Record<string, unknown>): void {
    this.channel.post(message as unknown as JsonRpcMessage, (error) => {
      // This one answer could not be encoded: the client still gets one.
      const wire = toWire(error);
      this.channel.post({ jsonrpc: '2.0', id: message.id, error: { code: INTERNAL_ERROR, message: wire.message, data: { 'lazy-mcp/error': wire } } } as JsonRpcMessage, () => undefined);
    });
  }

  /** The call is over here: the server is told (if it still runs it). */
  private end(passed: Passed, why: string): void {
    this.forget(passed);
    this.session.relay()?.cancel(passed.serverId, why);
  }

  private forget(passed: Passed): void {
    if (this.byClientId.get(passed.clientId) === passed) this.byClientId.delete(passed.clientId);
    if (this.callsByArgs.get(passed.args) === passed.clientId) this.callsByArgs.delete(passed.args);
    passed.over?.abort(new McpError('cancelled', 'the call the question was about is over'));
  }
}
