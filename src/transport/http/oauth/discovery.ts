import * as oauth from 'oauth4webapi';
import { type BearerChallenge, parseBearerChallenge } from './bearer-challenge.js';
import { assertSecure, authError, fromLibraryError, getJson, type OAuthHttp, unreachable } from './oauth-http.js';
import { shownUrl } from './url-guard.js';

/** The protected resource metadata of an MCP server and the URL it was read from. */
export interface DiscoveredResource {
  metadata: oauth.ResourceServer;
  /** The `resource` value to send (RFC 8707): the resource identifier the metadata names. */
  resource: string;
  url: URL;
  /** No metadata was published: a 2025-03-26 server, whose origin is its authorization server. */
  legacy?: true;
}

/**
 * Where the protected resource metadata may be, in the order the MCP authorization spec
 * gives: the `resource_metadata` URL of the challenge, then the well-known URI with the
 * server's path inserted (RFC 9728 §3.1), then the one at the root. A challenge URL on
 * another origin is left out: a server's metadata is its own origin's to publish, and the
 * header would otherwise make us fetch whatever it names (SSRF).
 */
export function resourceMetadataUrls(serverUrl: URL, fromChallenge?: string): URL[] {
  const urls: URL[] = [];
  const named = challengeUrl(serverUrl, fromChallenge);
  if (named && named.origin === serverUrl.origin) urls.push(named);
  const path = serverUrl.pathname.replace(/\/$/, '');
  if (path !== '') urls.push(new URL(`/.well-known/oauth-protected-resource${path}`, serverUrl.origin));
  urls.push(new URL('/.well-known/oauth-protected-resource', serverUrl.origin));
  return urls;
}

/** The challenge's `resource_metadata` as a URL; an unusable one is as good as none (the well-known paths follow). */
function challengeUrl(serverUrl: URL, fromChallenge: string | undefined): URL | undefined {
  if (!fromChallenge) return undefined;
  try {
    return new URL(fromChallenge, serverUrl);
  } catch {
    return undefined;
  }
}

/**
 * The metadata names a resource the server's URL is part of: the same origin and a path
 * that is the URL's path or a segment prefix of it (a server at `/mcp` may name its origin).
 */
export function resourceCovers(resource: string, serverUrl: URL): boolean {
  let named: URL;
  try {
    named = new URL(resource);
  } catch {
    return false;
  }
  if (named.origin !== serverUrl.origin || named.search !== '' || named.hash !== '') return false;
  const prefix = named.pathname.replace(/\/$/, '');
  const path = serverUrl.pathname.replace(/\/$/, '');
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Fetches and checks the server's protected resource metadata (RFC 9728). */
export async function discoverResource(http: OAuthHttp, serverUrl: URL, fromChallenge?: string): Promise<DiscoveredResource> {
  const tried: string[] = [];
  for (const url of resourceMetadataUrls(serverUrl, fromChallenge)) {
    tried.push(url.href);
    const response = await getJson(http, url, 'protected resource metadata');
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    // The check oauth4webapi makes is exact equality; the expected value is the named
    // resource when it covers the server's URL, else the URL itself, which then fails it.
    const named = await response
      .clone()
      .json()
      .then((body: unknown) => (body as { resource?: unknown } | null)?.resource, () => undefined);
    const expected = typeof named === 'string' && resourceCovers(named, serverUrl) ? new URL(named) : serverUrl;
    let metadata: oauth.ResourceServer;
    try {
      metadata = await oauth.processResourceDiscoveryResponse(expected, response);
    } catch (error) {
      throw fromLibraryError(http, error, 'protected resource metadata', url);
    }
    const servers = metadata.authorization_servers;
    if (!Array.isArray(servers) || servers.length === 0 || typeof servers[0] !== 'string') {
      throw authError(http, 'protocol-error', `the protected resource metadata at ${url.href} names no authorization server (authorization_servers)`);
    }
    return { metadata, resource: metadata.resource, url };
  }
  const named = challengeUrl(serverUrl, fromChallenge);
  if (named && named.origin !== serverUrl.origin) {
    throw authError(
      http,
      'protocol-error',
      `the server names its protected resource metadata at another origin (${shownUrl(named)}); only ${serverUrl.origin} may publish it, and there is none there (tried ${tried.join(', ')})`,
    );
  }
  // A 2025-03-26 server has no resource metadata: its own origin is the authorization server.
  const origin = serverUrl.origin;
  return { metadata: { resource: serverUrl.href, authorization_servers: [origin] }, resource: serverUrl.href, url: serverUrl, legacy: true };
}

/**
 * Where an authorization server's metadata may be, in the MCP spec's order: RFC 8414 with
 * the issuer's path inserted, OpenID Connect discovery with it inserted, then appended;
 * for an issuer without a path, RFC 8414 then OpenID Connect at the root.
 */
export function authorizationServerMetadataUrls(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/$/, '');
  const at = (p: string) => new URL(p, issuer.origin);
  if (path === '') return [at('/.well-known/oauth-authorization-server'), at('/.well-known/openid-configuration')];
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}

/**
 * Fetches an authorization server's metadata, checks that its `issuer` is the one the
 * resource named (RFC 8414 §3.3) and that it supports what MCP requires (PKCE S256).
 */
export async function discoverAuthorizationServer(http: OAuthHttp, issuer: string, defaultEndpoints = false): Promise<oauth.AuthorizationServer> {
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch (error) {
    throw authError(http, 'protocol-error', `the authorization server ${JSON.stringify(issuer)} is not a URL`, { cause: error });
  }
  const tried: string[] = [];
  for (const url of authorizationServerMetadataUrls(issuerUrl)) {
    tried.push(url.href);
    const response = await getJson(http, url, 'authorization server metadata');
    if (response.status !== 200) {
      await response.body?.cancel();
      continue;
    }
    let metadata: oauth.AuthorizationServer;
    try {
      // A 2025-03-26 server's origin is only where its metadata lives, not an issuer it names: the metadata's own issuer stands.
      metadata = await oauth.processDiscoveryResponse(defaultEndpoints ? await claimedIssuer(response, issuerUrl) : issuerUrl, response);
    } catch (error) {
      if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
        const claimed = (error.cause as { body?: { issuer?: unknown } } | undefined)?.body?.issuer;
        throw authError(
          http,
          'protocol-error',
          `the authorization server metadata at ${url.href} claims issuer ${JSON.stringify(claimed)}, not ${JSON.stringify(issuer)}; refusing it`,
          { cause: error },
        );
      }
      throw fromLibraryError(http, error, 'authorization server metadata', url);
    }
    assertUsable(http, metadata);
    return metadata;
  }
  if (defaultEndpoints) {
    // The 2025-03-26 fallback: /authorize, /token and /register at the server's origin.
    const at = (path: string) => new URL(path, issuerUrl.origin).href;
    const defaults: oauth.AuthorizationServer = { issuer, authorization_endpoint: at('/authorize'), token_endpoint: at('/token'), registration_endpoint: at('/register'), code_challenge_methods_supported: ['S256'] };
    assertUsable(http, defaults);
    return defaults;
  }
  throw authError(http, 'protocol-error', `no metadata for the authorization server ${issuer} (tried ${tried.join(', ')})`);
}

async function claimedIssuer(response: Response, fallback: URL): Promise<URL> {
  try {
    const issuer = ((await response.clone().json()) as { issuer?: unknown } | null)?.issuer;
    return typeof issuer === 'string' ? new URL(issuer) : fallback;
  } catch {
    return fallback;
  }
}

function assertUsable(http: OAuthHttp, as: oauth.AuthorizationServer): void {
  const methods = as.code_challenge_methods_supported;
  if (!Array.isArray(methods) || !methods.includes('S256')) {
    throw authError(
      http,
      'protocol-error',
      `the authorization server ${as.issuer} does not advertise PKCE S256 (code_challenge_methods_supported: ${JSON.stringify(methods ?? null)}); refusing to authorize with it`,
    );
  }
  for (const field of ['authorization_endpoint', 'token_endpoint'] as const) {
    if (typeof as[field] !== 'string') {
      throw authError(http, 'protocol-error', `the authorization server ${as.issuer} has no ${field} in its metadata`);
    }
  }
  // The authorization endpoint goes to a browser, the others get secrets: https only (OAuth 2.1 §1.5), http on loopback.
  for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'] as const) {
    const value = as[field];
    if (value === undefined) continue;
    let url: URL;
    try {
      url = new URL(value as string);
    } catch {
      throw authError(http, 'auth-required', `the authorization server ${as.issuer} names a ${field} that is not a URL (${JSON.stringify(String(value).slice(0, 200))}); refusing to authorize with it`);
    }
    assertSecure(http, url, `${field} of ${as.issuer}`);
  }
}

/** An unauthenticated request to the server, for the challenge that names its metadata. */
export async function probeChallenge(http: OAuthHttp, url: URL): Promise<BearerChallenge | undefined> {
  let response: Response;
  try {
    response = await http.fetch(url, {
      headers: { accept: 'application/json, text/event-stream' },
      signal: AbortSignal.timeout(http.timeoutMs),
    });
  } catch (error) {
    throw unreachable(http, url, 'server', error);
  }
  await response.body?.cancel();
  return response.status === 401 ? parseBearerChallenge(response.headers.get('www-authenticate')) : undefined;
}
