import type * as oauth from 'oauth4webapi';
import type { OAuthConfig } from './client-registration.js';
import type { DiscoveredResource } from './discovery.js';
import type { BearerChallenge } from './bearer-challenge.js';
import type { StoredTokens } from './token-store.js';

/** The scopes to ask for: the challenge's, else the resource's `scopes_supported`, else the configured ones. */
export function chooseScopes(challenge: BearerChallenge | undefined, discovered: DiscoveredResource, config: OAuthConfig): Set<string> {
  if (challenge?.scope) return splitScopes(challenge.scope);
  const supported = discovered.metadata.scopes_supported;
  if (Array.isArray(supported) && supported.length > 0) return new Set(supported);
  return new Set(config.scopes ?? []);
}

export function storedTokens(result: oauth.TokenEndpointResponse, requestedScope: string | undefined, previousRefresh?: string): StoredTokens {
  const tokens: StoredTokens = { accessToken: result.access_token, tokenType: result.token_type };
  const refreshToken = result.refresh_token ?? previousRefresh;
  if (refreshToken !== undefined) tokens.refreshToken = refreshToken;
  if (typeof result.expires_in === 'number') tokens.expiresAt = Date.now() + result.expires_in * 1000;
  const scope = result.scope ?? requestedScope;
  if (scope !== undefined) tokens.scope = scope;
  return tokens;
}

export function splitScopes(scope: string | undefined): Set<string> {
  return new Set((scope ?? '').split(' ').filter((s) => s !== ''));
}

export function union(a: Iterable<string>, b: Iterable<string>): Set<string> {
  return new Set([...a, ...b]);
}
