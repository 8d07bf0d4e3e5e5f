import { McpError, type McpPhase, serverLabel } from '../errors.js';
import type { RequestId } from '../transport/channel.js';
import { INTERNAL_ERROR, METHOD_NOT_FOUND } from '../transport/mcp-constants.js';
import type { IncomingRequestContext, RequestEngine } from './engine/engine.js';
import { type ConnectOptions, DEFAULT_CLIENT_INFO, type RequestScope } from './client-options.js';
import { resultSchemas } from './schemas/lazy-schemas.js';
import type { Label } from './session-errors.js';
import type { CreateMessageRequest, ElicitRequest, HostHandlers, HostRequestContext, Implementation } from './types.js';

/** The host handler that answers each kind of input request. */
const INPUT_KINDS: Record<string, 'elicitation' | 'sampling' | 'roots' | undefined> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * The client's answers to a server's questions (elicitation, sampling, roots), in both
 * eras: which handlers answer (the request's, the one caller's, else the client's own),
 * what the client declares (per session, and per request in 2026), and why a question
 * cannot be answered.
 */
export class HostRequests {
  constructor(
    private readonly engine: RequestEngine,
    private readonly options: ConnectOptions,
    private readonly name: string | undefined,
    /** A question declined for ambiguity: several callers had requests in flight (the client's `unrouted` event). */
    private readonly unrouted: (method: string, callers: object[]) => void = () => undefined,
  ) {
    // Legacy server→client requests: the handlers of the request they relate to when the transport says so, else of the one caller in flight.
    // Either way the question is about those requests: it stops once they are all over (HostRequestContext.signal).
    for (const method of Object.keys(INPUT_KINDS)) {
      engine.onRequest(method, (params, ctx: IncomingRequestContext) =>
        this.answer(method, params, (ctx.related?.scope as RequestScope | undefined) ?? this.soleCaller(method, ctx.id), ctx.signal),
      );
    }
  }

  /**
   * Why the client cannot answer one input request of an MRTR round, if it cannot: no
   * handler for it. Asking for a capability the client did not declare is the server's fault.
   */
  missingInputHandler(method: string, scope: RequestScope, label: Label, phase: McpPhase): McpError | undefined {
    const kind = INPUT_KINDS[method];
    const fail = (why: string) => new McpError('protocol-error', `${serverLabel(this.name)}${label} asked for ${method} (input_required), ${why}`, { server: this.name, phase });
    if (!kind) return fail('which this client does not know');
    const handlers = scope.handlers ?? this.options.handlers ?? {};
    if (handlers[kind] || (kind === 'roots' && this.options.roots)) return undefined;
    const declared = this.clientCapabilities()[kind] !== undefined;
    // A declared elicitation without a handler for this call is declined (answer() does it).
    if (kind === 'elicitation' && declared) return undefined;
    return fail(`but this client has no ${kind} handler${declared ? ' for this call' : ' and did not declare the capability'}`);
  }

  /**
   * A host handler's failure to answer an input request, as the call's error: an
   * `McpError` it threw as it is; anything else as `rpc-error` with the JSON-RPC error a
   * legacy-era server would have got for it (-32603).
   */
  handlerFailed(error: unknown, method: string, label: Label, phase: McpPhase): McpError {
    if (error instanceof McpError) return error;
    const why = error instanceof Error ? error.message : String(error);
    return new McpError('rpc-error', `${serverLabel(this.name)}${label} asked for ${method} (input_required), and the host's handler failed: ${why}`, {
      server: this.name,
      phase,
      rpc: { code: INTERNAL_ERROR, message: why },
      cause: error,
    });
  }

  /**
   * Who a question no request claims is about: the one caller with requests in flight, when
   * exactly one has (with its call, when it has one request in flight); several callers or
   * none, or a capability this client did not declare: undefined, so the client's own
   * handlers answer. Never a guess between callers.
   */
  private soleCaller(method: string, questionId: RequestId): RequestScope | undefined {
    const kind = INPUT_KINDS[method];
    if (!kind || this.clientCapabilities()[kind] === undefined) return undefined;
    let found: RequestScope | undefined;
    let count = 0;
    const scopes = [...this.options.waiting?.() ?? []];
    const pending = this.engine.pendingRequests();
    for (const request of pending) scopes.push(request.scope as RequestScope);
    for (const scope of scopes) {
      if (scope?.caller === undefined) continue;
      if (found && found.caller !== scope.caller) {
        this.unrouted(method, [...new Set(scopes.map((s) => s?.caller).filter((c) => c !== undefined))]);
        return undefined;
      }
      found = scope;
      count++;
    }
    if (!found) return undefined;
    // The question is about that caller's requests in flight: it stops when they are all over.
    const caller = found.caller;
    this.engine.about(
      questionId,
      pending.filter((request) => (request.scope as RequestScope | undefined)?.caller === caller).map((request) => request.id),
    );
    return count > 1 ? { handlers: found.handlers, caller } : found;
  }

  /** Answers a server's question with the handlers of the request that caused it, else the client's. */
  async answer(method: string, params: unknown, scope: RequestScope | undefined, signal: AbortSignal): Promise<unknown> {
    const handlers = scope?.handlers ?? this.options.handlers ?? {};
    const ctx: HostRequestContext = { server: this.name ?? '', signal, ...(scope?.toolCall ? { toolCall: scope.toolCall } : {}) };
    switch (method) {
      case 'elicitation/create': {
        if (!handlers.elicitation) return { action: 'decline' };
        const request = (params ?? {}) as ElicitRequest;
        const result = resultSchemas().ElicitResultSchema.parse(await handlers.elicitation(request, ctx));
        if (result.action !== 'accept' || !this.options.validateElicitation) return result;
        try {
          return await this.options.validateElicitation(request, result);
        } catch {
          return { action: 'decline' };
        }
      }
      case 'sampling/createMessage':
        if (handlers.sampling) return resultSchemas().CreateMessageResultSchema.parse(await handlers.sampling((params ?? {}) as CreateMessageRequest, ctx));
        break;
      case 'roots/list':
        if (handlers.roots) return { roots: await handlers.roots(ctx) };
        if (this.options.roots) return { roots: this.options.roots };
        break;
    }
    throw new McpError('rpc-error', `Method not found: ${method}`, { rpc: { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` } });
  }

  get clientInfo(): Implementation {
    return this.options.clientInfo ?? DEFAULT_CLIENT_INFO;
  }

  /** A capability is declared only when a handler for it exists or the `capabilities` option names it. */
  /** Built once: the options it reads are the session's, fixed at connect. */
  private declared: Record<string, unknown> | undefined;

  clientCapabilities(): Record<string, unknown> {
    return (this.declared ??= this.declare());
  }

  private declare(handlers: HostHandlers = this.options.handlers ?? {}): Record<string, unknown> {
    const named = this.options.capabilities ?? {};
    const capabilities: Record<string, unknown> = {};
    if (this.options.roots || handlers.roots || named.roots) capabilities.roots = { listChanged: false };
    if (handlers.elicitation || named.elicitation) capabilities.elicitation = { form: {}, url: {} };
    if (handlers.sampling || named.sampling) capabilities.sampling = {};
    return capabilities;
  }

  /** The capabilities each set of a caller's handlers adds to the session's, made once per set. */
  private readonly declaredFor = new WeakMap<HostHandlers, Record<string, unknown>>();

  /**
   * 2026: what one request declares. Capabilities travel with each request, so a call
   * whose own handlers (a session's) answer elicitation, sampling or roots declares them
   * even when the session's defaults do not; else the session's declaration.
   */
  requestCapabilities(scope: RequestScope | undefined): Record<string, unknown> {
    const session = this.clientCapabilities();
    const handlers = scope?.handlers;
    if (handlers === undefined || handlers === this.options.handlers) return session;
    let own = this.declaredFor.get(handlers);
    if (own === undefined) {
      const added = this.declare(handlers);
      // Nothing beyond the session's: share its object, so the common case sends the same one.
      own = Object.keys(added).every((kind) => kind in session) ? session : { ...session, ...added };
      this.declaredFor.set(handlers, own);
    }
    return own;
  }
}
