import { McpError, serverLabel } from '../../errors.js';
import { exchange, type ExchangeConfig } from './http-exchange.js';
import { discardBody } from './read-body.js';

/**
 * A legacy session the server no longer knows (HTTP 404 for its `Mcp-Session-Id`). Coded
 * `peer-eof` like a server that went away: the channel is over, and the next use starts
 * a new session.
 */
export function sessionExpired(server: string | undefined, sessionId: string): McpError {
  return new McpError('peer-eof', `${serverLabel(server)}the server ended HTTP session ${sessionId} (HTTP 404); the next use starts a new session`, {
    ...(server === undefined ? {} : { server }),
    phase: 'connect',
    status: 404,
  });
}

/** Ends a legacy session with `DELETE`, waiting at most `timeoutMs`; a failure or a 405 is fine. */
export async function deleteSession(config: ExchangeConfig, sessionId: string, protocolVersion: string | undefined, timeoutMs: number): Promise<void> {
  if (!(timeoutMs > 0)) return;
  const headers: Record<string, string> = { 'mcp-session-id': sessionId };
  if (protocolVersion !== undefined) headers['mcp-protocol-version'] = protocolVersion;
  try {
    // The token goes along, but a 401 here never starts an OAuth step: the session is being dropped.
    const authorization = await config.auth?.authorization();
    if (authorization !== undefined) headers.authorization = authorization;
    const { auth: _auth, ...withoutAuth } = config;
    const response = await exchange(withoutAuth, {
      method: 'DELETE',
      headers,
      signal: AbortSignal.timeout(timeoutMs),
      idempotent: false,
      label: 'DELETE session',
    });
    await discardBody(response);
  } catch {
    // The server is gone or slow: the session will expire on its side.
  }
}
