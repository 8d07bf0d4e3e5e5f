import { McpError } from '../errors.js';

import { INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND } from '../transport/mcp-constants.js';

// A backend's own JSON-RPC error keeps its code.
export { INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND } from '../transport/mcp-constants.js';

/** What a gateway client finds in a JSON-RPC error's `data`: our stable code and, when known, the server. */
export interface GatewayErrorData {
  code: string;
  server?: string;
  phase?: string;
  /** The backend's own JSON-RPC error, when it answered one. */
  rpc?: { code: number; message: string; data?: unknown };
  /** `rate-limited`: when the call may be tried again, in ms. */
  retryAfterMs?: number;
  /** `auth-required` for a principal: the URL to send its user to. */
  authorizationUrl?: string;
}

/** Failures of the caller's request (bad name, bad arguments): -32602, as MCP asks for an unknown tool. */
const CALLER_MISTAKES = new Set(['unknown-tool', 'unknown-prompt', 'unknown-server', 'invalid-arguments']);

/**
 * The JSON-RPC error a gateway client gets for a failure: -32602 for its own mistakes, the
 * backend's code for a backend's JSON-RPC error, -32603 for everything else (a server that
 * cannot start, a timeout, a crash). `data` carries our `code` and the `server`, so a client
 * can tell "no such tool" from "that server is down" without parsing the message.
 * Returned as an `McpError` whose `rpc` the request engine puts on the wire.
 */
export function toRpcError(error: unknown): McpError {
  if (refusals.has(error as object)) return error as McpError;
  if (!(error instanceof McpError)) {
    const message = error instanceof Error ? error.message : String(error);
    return new McpError('protocol-error', message, { rpc: { code: INTERNAL_ERROR, message, data: { code: 'internal' } } });
  }
  const data: GatewayErrorData = {
    code: error.code,
    ...(error.server === undefined ? {} : { server: error.server }),
    ...(error.phase === undefined ? {} : { phase: error.phase }),
    ...(error.rpc === undefined ? {} : { rpc: error.rpc }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.authorizationUrl === undefined ? {} : { authorizationUrl: error.authorizationUrl }),
  };
  const code = CALLER_MISTAKES.has(error.code) ? INVALID_PARAMS : error.code === 'rpc-error' && error.rpc ? error.rpc.code : INTERNAL_ERROR;
  return new McpError(error.code, error.message, { server: error.server, phase: error.phase, rpc: { code, message: error.message, data }, cause: error });
}

/** An error to answer with a given JSON-RPC code (a request the gateway itself refuses). */
export function rpcFailure(code: number, message: string, data?: unknown): McpError {
  const error = new McpError('invalid-arguments', message, { rpc: { code, message, ...(data === undefined ? {} : { data }) } });
  refusals.add(error);
  return error;
}

/** Errors made by {@link rpcFailure}: already in their wire form. */
const refusals = new WeakSet<object>();

/** The "method not found" answer to a question nobody handles; `why`, when given, is told in the message (not on the wire). */
export function methodNotFound(method: string, why?: string): McpError {
  const message = `Method not found: ${method}`;
  return new McpError('rpc-error', why === undefined ? message : `${message} (${why})`, { rpc: { code: METHOD_NOT_FOUND, message } });
}
