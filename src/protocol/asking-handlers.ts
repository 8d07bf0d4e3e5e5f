import { methodNotFound } from './rpc-errors.js';
import type { CreateMessageResult, ElicitResult, HostHandlers, HostRequestContext } from './types.js';

/**
 * The handlers that put a backend's questions to a gateway client through `ask`, for what
 * it declared (read at the time of asking): an undeclared elicitation is declined, an
 * undeclared sampling is "method not found". The pool daemon's sessions ask their clients
 * the same way.
 */
export function askingHandlers(
  declared: () => { elicitation?: unknown; sampling?: unknown },
  ask: (method: string, request: object, ctx: HostRequestContext) => Promise<unknown>,
): HostHandlers {
  return {
    elicitation: (request, ctx) =>
      declared().elicitation === undefined ? Promise.resolve({ action: 'decline' }) : (ask('elicitation/create', request, ctx) as Promise<ElicitResult>),
    sampling: (request, ctx) =>
      declared().sampling === undefined
        ? Promise.reject(methodNotFound('sampling/createMessage', "the gateway's client did not declare sampling"))
        : (ask('sampling/createMessage', request, ctx) as Promise<CreateMessageResult>),
  };
}
