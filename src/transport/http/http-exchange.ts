import { McpError, serverLabel } from '../../errors.js';
import type { AuthProvider } from './auth-provider.js';
import { connectFailed } from './fetch-failure.js';
import { discardBody } from './read-body.js';
import { delay, RETRYABLE_STATUS, type RetryOptions } from './retry-policy.js';
import { shownOrigin, withoutUserinfo } from './shown-url.js';

/** What every HTTP request of one channel shares. */
export interface ExchangeConfig {
  url: URL;
  /** The URL as messages show it: no userinfo, no value that came from a `${VAR}`. */
  shown: string;
  server?: string;
  /** The config's `headers`, sent on every request. */
  headers: Record<string, string>;
  auth?: AuthProvider;
  retry: RetryOptions;
  fetch: typeof fetch;
}

/** What a channel's options say about its requests; the url is checked here, once for every HTTP channel. */
export function exchangeConfig(
  options: { url: string | URL; shownUrl?: string; name?: string; headers?: Record<string, string>; auth?: AuthProvider; fetch?: typeof fetch },
  retry: RetryOptions,
): ExchangeConfig {
  const url = new URL(options.url);
  const shown = withoutUserinfo(options.shownUrl ?? url.href);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`url must be http or https, got ${shown}`);
  const headers = { ...options.headers };
  if (url.username !== '' || url.password !== '') {
    // fetch refuses a URL with credentials (quoting it in its error); they are Basic credentials, sent as such.
    const hasAuthorization = Object.keys(headers).some((key) => key.toLowerCase() === 'authorization');
    if (!hasAuthorization) headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return {
    url,
    shown,
    ...(options.name === undefined ? {} : { server: options.name }),
    headers,
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    retry,
    fetch: options.fetch ?? globalThis.fetch,
  };
}

export interface ExchangeRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /** Whether a request that got no answer (or a 502/503/504) may be sent again. */
  idempotent: boolean;
  /** Names the request in errors (`tools/list`, `GET stream`). */
  label: string;
}

/**
 * Failures of the channel's AuthProvider (a token endpoint that cannot be reached while
 * renewing a token): that request's failure, whatever its code, never a sign that the MCP
 * server is gone. A channel closes on a `connect-failed` only when it is not one of these.
 */
const authFailures = new WeakSet<object>();

/** Whether `error` came from the AuthProvider rather than from the MCP server's endpoint. */
export function isAuthFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && authFailures.has(error);
}

function fromAuth(error: unknown): never {
  if (typeof error === 'object' && error !== null) authFailures.add(error);
  throw error;
}

/** Thrown when the request's own signal aborted it: the sender no longer waits. */
export class ExchangeAborted extends Error {}

/**
 * One HTTP request with the channel's headers and authorization: network failures
 * become `connect-failed`; an idempotent request is retried a bounded number of times;
 * a 401 (or a 403 asking for more scope) goes to the AuthProvider once, then the
 * request is sent again. Resolves with any other answer, whatever its status.
 */
export async function exchange(config: ExchangeConfig, request: ExchangeRequest): Promise<Response> {
  let retries = 0;
  let authRetried = false;
  let target = config.url;
  let redirects = 0;
  for (;;) {
    const headers = new Headers(config.headers);
    const authorization = config.auth ? await config.auth.authorization().catch(fromAuth) : undefined;
    if (authorization !== undefined) headers.set('authorization', authorization);
    for (const [key, value] of Object.entries(request.headers)) headers.set(key, value);
    let response: Response;
    try {
      // Never 'follow': fetch would send the configured headers and the body wherever a server points.
      response = await config.fetch(target, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: request.signal,
        redirect: 'manual',
      });
    } catch (error) {
      if (request.signal.aborted) throw new ExchangeAborted('aborted');
      if (request.idempotent && retries < config.retry.attempts) {
        await delay(config.retry.baseDelayMs * 2 ** retries++, request.signal);
        continue;
      }
      throw connectFailed(config.server, shownOrigin(config.shown), error);
    }
    const next = redirectTarget(config, request, target, response, redirects);
    if (next) {
      await discardBody(response);
      target = next;
      redirects++;
      continue;
    }
    const challenge = authChallenge(response);
    if (challenge && config.auth && !authRetried) {
      authRetried = true;
      await discardBody(response);
      // The header this request carried tells the provider a stale token from a refused one.
      await config.auth
        .unauthorized({
          status: challenge,
          wwwAuthenticate: response.headers.get('www-authenticate'),
          resourceUrl: config.url,
          ...(authorization === undefined ? {} : { authorization }),
        })
        .catch(fromAuth);
      continue;
    }
    if (challenge) {
      await discardBody(response);
      throw new McpError(
        'auth-required',
        `${serverLabel(config.server)}${request.label} was answered HTTP ${response.status}${config.auth ? ' after a new token' : ''}; ${
          config.auth ? 'log in again' : 'configure "oauth" or an Authorization header for it'
        }`,
        { ...(config.server === undefined ? {} : { server: config.server }), phase: 'auth', status: response.status },
      );
    }
    if (RETRYABLE_STATUS.has(response.status) && request.idempotent && retries < config.retry.attempts) {
      await discardBody(response);
      await delay(config.retry.baseDelayMs * 2 ** retries++, request.signal);
      if (request.signal.aborted) throw new ExchangeAborted('aborted');
      continue;
    }
    return response;
  }
}

/** Redirects one request may follow, all within the server's origin. */
const MAX_REDIRECTS = 5;

/**
 * Where a redirect answer sends the request, if it may follow: only within the origin it
 * was sent to (the configured headers, the authorization and the body go with it), a
 * 307/308 for any method, a 301/302/303 for a GET. A redirect elsewhere is refused.
 */
function redirectTarget(config: ExchangeConfig, request: ExchangeRequest, from: URL, response: Response, hops: number): URL | undefined {
  if (response.status < 300 || response.status >= 400 || response.status === 304) return undefined;
  const location = response.headers.get('location');
  const fields = { ...(config.server === undefined ? {} : { server: config.server }), phase: 'connect' as const, status: response.status };
  let next: URL | undefined;
  try {
    next = location === null ? undefined : new URL(location, from);
  } catch {
    next = undefined;
  }
  if (next === undefined) {
    throw new McpError('connect-failed', `${serverLabel(config.server)}${request.label} was answered HTTP ${response.status} without a usable Location`, fields);
  }
  if (next.origin !== from.origin) {
    throw new McpError(
      'connect-failed',
      `${serverLabel(config.server)}${request.label} was redirected (HTTP ${response.status}) to another origin, ${next.origin}; not following it with the server's headers${request.body === undefined ? '' : ' and the request body'}: put the new URL in the config if it is right`,
      fields,
    );
  }
  const keepsMethod = response.status === 307 || response.status === 308;
  if (!keepsMethod && request.method !== 'GET') {
    throw new McpError('connect-failed', `${serverLabel(config.server)}${request.label} was answered HTTP ${response.status} (a redirect that would drop the ${request.method}'s body); only 307 and 308 are followed for it`, fields);
  }
  if (hops >= MAX_REDIRECTS) throw new McpError('connect-failed', `${serverLabel(config.server)}${request.label} was redirected more than ${MAX_REDIRECTS} times`, fields);
  return next;
}

/** 401, or 403 whose challenge asks for more scope (step-up); otherwise undefined. */
function authChallenge(response: Response): 401 | 403 | undefined {
  if (response.status === 401) return 401;
  if (response.status === 403 && /insufficient_scope/i.test(response.headers.get('www-authenticate') ?? '')) return 403;
  return undefined;
}
