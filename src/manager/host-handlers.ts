import { McpError } from '../errors.js';
import { compileSchema, issuesText } from '../protocol/schema-validator.js';
import type { ElicitRequest, ElicitResult, HostHandlers, HostRequestContext, Root } from '../protocol/types.js';

/** Who makes a call: the manager itself or one session, with the handlers its questions go to. */
export interface Caller {
  /** The caller's handlers over the manager's: what answers a question its call caused. */
  readonly handlers: HostHandlers;
}

/** Capabilities the host may declare to servers. */
export interface DeclaredCapabilities {
  elicitation?: boolean;
  sampling?: boolean;
  roots?: boolean;
}

interface InFlight {
  count: number;
  /** The tool calls among them, for the handler's context. */
  toolCalls: Map<object, { name: string; arguments: object }>;
}

const METHODS = ['elicitation', 'sampling', 'roots'] as const;

/**
 * Sends each server's question to the chat whose call caused it. A request tied to a call
 * (a 2026 input request, or a legacy request on the call's own HTTP stream) carries that
 * call's handlers by construction; a legacy request with no such tie goes to the one
 * caller with calls in flight on that server, and when there are several (or none) to the
 * manager's handlers: never a guess at another chat.
 */
export class HostRouter {
  /** Per server, per caller, the calls in flight. */
  private readonly inFlight = new Map<string, Map<Caller, InFlight>>();
  readonly root: Caller;

  constructor(
    private readonly defaults: HostHandlers = {},
    private readonly declared: DeclaredCapabilities = {},
    private readonly roots?: Root[],
  ) {
    this.root = { handlers: defaults };
  }

  /** A session's caller: its own handlers, the manager's for what it does not handle. */
  caller(handlers: HostHandlers | undefined): Caller {
    return handlers ? { handlers: { ...this.defaults, ...definedOnly(handlers) } } : this.root;
  }

  /** Counts a call of `caller` on `server` until the returned function is called. */
  enter(server: string, caller: Caller, toolCall?: { name: string; arguments: object }): () => void {
    let callers = this.inFlight.get(server);
    if (!callers) this.inFlight.set(server, (callers = new Map()));
    let mine = callers.get(caller);
    if (!mine) callers.set(caller, (mine = { count: 0, toolCalls: new Map() }));
    mine.count++;
    const token = {};
    if (toolCall) mine.toolCalls.set(token, toolCall);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      mine.toolCalls.delete(token);
      if (--mine.count > 0) return;
      callers.delete(caller);
      if (callers.size === 0) this.inFlight.delete(server);
    };
  }

  /**
   * The handlers given to a server's connection for the questions no call claims: they
   * find the caller at the time of asking. Only the methods the host declares are present,
   * so a capability is declared exactly when the manager handles it or names it.
   */
  connectionHandlers(): HostHandlers {
    const out: HostHandlers = {};
    const has = (m: (typeof METHODS)[number]) => this.defaults[m] !== undefined || this.declared[m] === true;
    if (has('elicitation')) {
      out.elicitation = (request, ctx) => {
        const { handlers, toolCall } = this.attribute(ctx.server);
        return handlers.elicitation ? handlers.elicitation(request, withCall(ctx, toolCall)) : Promise.resolve({ action: 'decline' });
      };
    }
    if (has('sampling')) {
      out.sampling = (request, ctx) => {
        const { handlers, toolCall } = this.attribute(ctx.server);
        if (!handlers.sampling) return Promise.reject(methodNotFound('sampling/createMessage'));
        return handlers.sampling(request, withCall(ctx, toolCall));
      };
    }
    if (has('roots') || this.roots) {
      out.roots = (ctx) => {
        const { handlers, toolCall } = this.attribute(ctx.server);
        if (handlers.roots) return handlers.roots(withCall(ctx, toolCall));
        if (this.roots) return Promise.resolve(this.roots);
        return Promise.reject(methodNotFound('roots/list'));
      };
    }
    return out;
  }

  /** The caller whose question this is when that is certain, else the manager's handlers. */
  private attribute(server: string): { handlers: HostHandlers; toolCall?: { name: string; arguments: object } } {
    const callers = this.inFlight.get(server);
    if (!callers || callers.size !== 1) return { handlers: this.defaults };
    const [[caller, calls]] = callers;
    const toolCall = calls.toolCalls.size === 1 && calls.count === 1 ? [...calls.toolCalls.values()][0] : undefined;
    return { handlers: caller.handlers, toolCall };
  }
}

/**
 * The handlers for one tool call: their context names the call as its caller made it
 * (the public name), whichever path the question took.
 */
export function forCall(handlers: HostHandlers, toolCall: { name: string; arguments: object }): HostHandlers {
  const { elicitation, sampling, roots } = handlers;
  // No copy per call for a caller that handles nothing.
  if (!elicitation && !sampling && !roots) return handlers;
  const out: HostHandlers = {};
  if (elicitation) out.elicitation = (request, ctx) => elicitation(request, { ...ctx, toolCall });
  if (sampling) out.sampling = (request, ctx) => sampling(request, { ...ctx, toolCall });
  if (roots) out.roots = (ctx) => roots({ ...ctx, toolCall });
  return out;
}

function withCall(ctx: HostRequestContext, toolCall: { name: string; arguments: object } | undefined): HostRequestContext {
  return toolCall && !ctx.toolCall ? { ...ctx, toolCall } : ctx;
}

function definedOnly(handlers: HostHandlers): HostHandlers {
  const out: HostHandlers = {};
  for (const method of METHODS) if (handlers[method] !== undefined) (out as Record<string, unknown>)[method] = handlers[method];
  return out;
}

/** The "method not found" answer to a server's question nobody handles; `why`, when given, is told in the message (not on the wire). */
export function methodNotFound(method: string, why?: string): McpError {
  const message = `Method not found: ${method}`;
  return new McpError('rpc-error', why === undefined ? message : `${message} (${why})`, { rpc: { code: -32601, message } });
}

/** Rejects handler options that are not functions, naming the field and the value. */
export function handlersProblem(handlers: unknown, where: string): string | undefined {
  if (handlers === undefined) return undefined;
  if (handlers === null || typeof handlers !== 'object') return `${where} handlers must be an object, got ${JSON.stringify(handlers) ?? String(handlers)}`;
  for (const method of METHODS) {
    const value = (handlers as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') return `${where} handlers.${method} must be a function, got ${JSON.stringify(value) ?? String(value)} (${typeof value})`;
  }
  return undefined;
}

/**
 * An accepted form answer, checked against the request's `requestedSchema` with its
 * defaults applied; a mismatch throws, and the client declines instead of sending it.
 * URL-mode answers carry no content and pass as they are.
 */
export function validateElicitation(request: ElicitRequest, result: ElicitResult): ElicitResult {
  if (request.mode === 'url' || request.requestedSchema === undefined) return result;
  const schema = compileSchema(request.requestedSchema, { useDefaults: true });
  if (!schema) return result;
  // Defaults are written into the value checked: a copy, never the handler's own object.
  const content = structuredClone(result.content ?? {});
  const issues = schema.check(content);
  if (issues.length > 0) throw new McpError('invalid-arguments', `the elicitation answer does not match requestedSchema: ${issuesText(issues)}`, {});
  return { ...result, content };
}
