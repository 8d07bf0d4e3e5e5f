import { McpError } from '../../errors.js';
import { shown } from '../../util/check.js';
import { methodNotFound } from '../../protocol/rpc-errors.js';
import { compileSchema, issuesText, loadValidator, validatorLoaded } from '../../protocol/schemas/schema-validator.js';
import type { ElicitRequest, ElicitResult, HostHandlers, Root } from '../../protocol/types.js';

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

const METHODS = ['elicitation', 'sampling', 'roots'] as const;

/**
 * The host's handlers for the servers' questions: the manager's, and each session's over
 * them. A question tied to a call (a 2026 input request, a legacy request on the call's
 * own HTTP stream, or the only caller with calls in flight on that server) goes to that
 * call's caller, by the client (`RequestOptions.caller`); the rest go to the manager's.
 */
export class HostRouter {
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

  /**
   * The handlers given to a server's connection, for the questions no caller claims. Only
   * the methods the host declares are present, so a capability is declared exactly when
   * the manager handles it or names it; one it names without handling declines
   * (elicitation) or is -32601 (sampling, roots without `roots`).
   */
  connectionHandlers(): HostHandlers {
    const out: HostHandlers = {};
    const { elicitation, sampling, roots } = this.defaults;
    const has = (m: (typeof METHODS)[number]) => this.defaults[m] !== undefined || this.declared[m] === true;
    if (has('elicitation')) out.elicitation = elicitation ?? (() => Promise.resolve({ action: 'decline' }));
    if (has('sampling')) out.sampling = sampling ?? (() => Promise.reject(methodNotFound('sampling/createMessage')));
    if (has('roots') || this.roots) {
      const given = this.roots;
      out.roots = roots ?? (() => (given ? Promise.resolve(given) : Promise.reject(methodNotFound('roots/list'))));
    }
    return out;
  }
}

function definedOnly(handlers: HostHandlers): HostHandlers {
  const out: HostHandlers = {};
  for (const method of METHODS) if (handlers[method] !== undefined) (out as Record<string, unknown>)[method] = handlers[method];
  return out;
}

/** Rejects handler options that are not functions, naming the field and the value. */
export function handlersProblem(handlers: unknown, where: string): string | undefined {
  if (handlers === undefined) return undefined;
  if (handlers === null || typeof handlers !== 'object') return `${where} handlers must be an object, got ${shown(handlers)}`;
  for (const method of METHODS) {
    const value = (handlers as Record<string, unknown>)[method];
    if (value !== undefined && typeof value !== 'function') return `${where} handlers.${method} must be a function, got ${shown(value)}`;
  }
  return undefined;
}

/**
 * An accepted form answer, checked against the request's `requestedSchema` with its
 * defaults applied; a mismatch throws, and the client declines instead of sending it.
 * URL-mode answers carry no content and pass as they are.
 */
export function validateElicitation(request: ElicitRequest, result: ElicitResult): ElicitResult | Promise<ElicitResult> {
  if (request.mode === 'url' || request.requestedSchema === undefined) return result;
  if (!validatorLoaded()) return loadValidator().then(() => validateElicitation(request, result));
  const schema = compileSchema(request.requestedSchema, { useDefaults: true });
  if (!schema) return result;
  // Defaults are written into the value checked: a copy, never the handler's own object.
  const content = structuredClone(result.content ?? {});
  const issues = schema.check(content);
  if (issues.length > 0) throw new McpError('invalid-arguments', `the elicitation answer does not match requestedSchema: ${issuesText(issues)}`, {});
  return { ...result, content };
}
