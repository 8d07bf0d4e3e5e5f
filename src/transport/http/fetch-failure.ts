import { McpError, serverLabel } from '../../errors.js';

/** The system error code behind a failed `fetch` (ECONNREFUSED, ENOTFOUND, …), when there is one. */
export function networkCode(error: unknown): string | undefined {
  for (let cause: unknown = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `connect-failed` for a request that never got an answer, naming the system's reason. */
export function connectFailed(server: string | undefined, origin: string, error: unknown): McpError {
  const code = networkCode(error);
  const reason = code ?? ((error as Error | undefined)?.message || 'network error');
  return new McpError('connect-failed', `${serverLabel(server)}cannot reach ${origin} (${reason}); check the url and that the server is running`, {
    ...(server === undefined ? {} : { server }),
    phase: 'connect',
    cause: error,
  });
}

/** An HTTP answer that is neither a message nor an acknowledgement. */
export function httpFailure(server: string | undefined, shownUrl: string, method: string, status: number, detail: string): McpError {
  const shown = detail.trim().slice(0, 200);
  return new McpError('connect-failed', `${serverLabel(server)}${method} to ${shownUrl} was answered HTTP ${status}${shown ? `: ${shown}` : ''}`, {
    ...(server === undefined ? {} : { server }),
    phase: 'connect',
    status,
  });
}
