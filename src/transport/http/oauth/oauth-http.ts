import * as oauth from 'oauth4webapi';
import { McpError, serverLabel, type McpErrorCode } from '../../../errors.js';
import { insecure, isLoopback, shownUrl } from './url-guard.js';

/** What every request to a metadata, registration or token endpoint needs. */
export interface OAuthHttp {
  server: string;
  fetch: typeof fetch;
  /** Bound of one request to the authorization server or the metadata endpoints (ms). */
  timeoutMs: number;
}

/** An `McpError` of the `auth` phase, its message prefixed with the server. */
export function authError(http: Pick<OAuthHttp, 'server'>, code: McpErrorCode, message: string, extra: { cause?: unknown; status?: number } = {}): McpError {
  return new McpError(code, `${serverLabel(http.server)}${message}`, { server: http.server, phase: 'auth', ...extra });
}

export { isLoopback };

/** Refuses, as `auth-required`, an OAuth URL that is not https (http only on loopback): no login can go through it. */
export function assertSecure(http: Pick<OAuthHttp, 'server'>, url: URL, what: string): void {
  const why = insecure(url);
  if (why === undefined) return;
  throw authError(http, 'auth-required', `refusing the ${what} ${shownUrl(url)}: ${why}; OAuth endpoints must be https`);
}

/** The options oauth4webapi takes for one request to `url`: our fetch, our time bound. */
export function libraryOptions(http: OAuthHttp, url: URL) {
  return {
    [oauth.customFetch]: http.fetch,
    // http is only allowed for loopback endpoints; assertSecure has refused the others.
    [oauth.allowInsecureRequests]: url.protocol === 'http:' && isLoopback(url),
    signal: () => AbortSignal.timeout(http.timeoutMs),
  };
}

/** Redirects a metadata request may follow, each within the origin it was sent to. */
const MAX_REDIRECTS = 3;

/**
 * A GET of a JSON metadata document, or the failure to reach it as `connect-failed`. A
 * redirect is followed only within the URL's origin: metadata is the origin's to publish,
 * and a redirect elsewhere would make us fetch what the server chose (SSRF).
 */
export async function getJson(http: OAuthHttp, url: URL, what: string): Promise<Response> {
  let at = url;
  for (let hops = 0; ; hops++) {
    assertSecure(http, at, what);
    let response: Response;
    try {
      response = await http.fetch(at, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(http.timeoutMs) });
    } catch (error) {
      throw unreachable(http, at, what, error);
    }
    const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
    if (location === null) return response;
    await response.body?.cancel();
    let next: URL;
    try {
      next = new URL(location, at);
    } catch {
      throw authError(http, 'protocol-error', `the ${what} at ${shownUrl(at)} redirects to something that is not a URL`);
    }
    if (next.origin !== url.origin) {
      throw authError(http, 'protocol-error', `the ${what} at ${shownUrl(at)} redirects to another origin (${shownUrl(next)}); refusing to follow it`);
    }
    if (hops >= MAX_REDIRECTS) throw authError(http, 'protocol-error', `the ${what} at ${shownUrl(url)} redirects more than ${MAX_REDIRECTS} times`);
    at = next;
  }
}

export function unreachable(http: OAuthHttp, url: URL, what: string, error: unknown): McpError {
  if (error instanceof McpError) return error;
  const timedOut = (error as Error | undefined)?.name === 'TimeoutError';
  const reason = timedOut ? `no answer within ${http.timeoutMs} ms` : systemReason(error);
  return authError(http, timedOut ? 'timeout' : 'connect-failed', `cannot reach the ${what} at ${url.origin}${url.pathname} (${reason})`, { cause: error });
}

function systemReason(error: unknown): string {
  for (let cause: unknown = error, depth = 0; cause !== undefined && cause !== null && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && !code.startsWith('OAUTH_')) return code;
    cause = (cause as { cause?: unknown }).cause;
  }
  return (error as Error | undefined)?.message || 'network error';
}

/**
 * An error thrown by oauth4webapi (or by fetch under it) as an `McpError`: an OAuth error
 * answer is `auth-required` naming the error, a response that breaks the protocol is
 * `protocol-error`, a request that got no answer is `connect-failed` or `timeout`.
 */
export function fromLibraryError(http: OAuthHttp, error: unknown, what: string, url: URL): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof oauth.ResponseBodyError) {
    const detail = error.error_description ? `: ${error.error_description}` : '';
    return authError(http, 'auth-required', `the ${what} answered ${error.error}${detail}; ${loginHint(http.server)}`, {
      cause: error,
      status: error.status,
    });
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    return authError(http, 'auth-required', `the ${what} refused the client (HTTP ${error.status}); ${loginHint(http.server)}`, {
      cause: error,
      status: error.status,
    });
  }
  if (error instanceof oauth.AuthorizationResponseError) {
    const detail = error.error_description ? `: ${error.error_description}` : '';
    return authError(http, 'auth-required', `the authorization was refused (${error.error}${detail}); ${loginHint(http.server)}`, { cause: error });
  }
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError) {
    return authError(http, 'protocol-error', `the ${what} at ${url.origin}${url.pathname} broke the OAuth protocol: ${error.message}`, { cause: error });
  }
  return unreachable(http, url, what, error);
}

/** What to do to authorize a server, as every `auth-required` message says. */
export function loginHint(server: string): string {
  return `call login(${JSON.stringify(server)}) or run \`lazy-mcp login ${server}\``;
}
