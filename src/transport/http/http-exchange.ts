import { McpError, serverLabel } from '../../errors.js';
import type { AuthProvider } from './auth-provider.js';
import { connectFailed } from './fetch-failure.js';
import { discardBody } from './read-body.js';
import { delay, RETRYABLE_STATUS, type RetryOptions } from './retry-policy.js';

/** What every HTTP request of one channel shares. */
export interface ExchangeConfig {
  url: URL;
  server?: string;
  /** The config's `headers`, sent on every request. */
  headers: Record<string, string>;
  auth?: AuthProvider;
  retry: RetryOptions;
  fetch: typeof fetch;
}

/** What a channel's options say about its requests; the url is checked here, once for every HTTP channel. */
export function exchangeConfig(
  options: { url: string | URL; name?: string; headers?: Record<string, string>; auth?: AuthProvider; fetch?: typeof fetch },
  retry: RetryOptions,
): ExchangeConfig {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`url must be http or https, got ${url.href}`);
  return {
    url,
    ...(options.name === undefined ? {} : { server: options.name }),
    headers: options.headers ?? {},
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
  for (;;) {
    const headers = new Headers(config.headers);
    const authorization = config.auth ? await config.auth.authorization().catch(fromAuth) : undefined;
    if (authorization !== undefined) headers.set('authorization', authorization);
    for (const [key, value] of Object.entries(request.headers)) headers.set(key, value);
    let response: Response;
    try {
      response = await config.fetch(config.url, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: request.signal,
        redirect: 'follow',
      });
    } catch (error) {
      if (request.signal.aborted) throw new ExchangeAborted('aborted');
      if (request.idempotent && retries < config.retry.attempts) {
        await delay(config.retry.baseDelayMs * 2 ** retries++, request.signal);
        continue;
      }
      throw connectFailed(config.server, config.url, error);
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

/** 401, or 403 whose challenge asks for more scope (step-up); otherwise undefined. */
function authChallenge(response: Response): 401 | 403 | undefined {
  if (response.status === 401) return 401;
  if (response.status === 403 && /insufficient_scope/i.test(response.headers.get('www-authenticate') ?? '')) return 403;
  return undefined;
}
