import type { webcrypto } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { signingKeyProblem } from './signing-key.js';
import { authError, fromLibraryError, isLoopback, libraryOptions, type OAuthHttp } from './oauth-http.js';
import type { StoredClient, TokenEndpointAuthMethod } from './token-store.js';

/** A server's `oauth` config entry (SPEC: `{ clientId?, clientSecret?, clientMetadataUrl?, scopes?, redirectUri? }`). */
export interface OAuthConfig {
  /** A client registered beforehand with the authorization server; used first when given. */
  clientId?: string;
  /** Its secret, for a confidential client (sent as `client_secret_basic` or `_post`, as the server allows). */
  clientSecret?: string;
  /** An https URL of this client's Client ID Metadata Document, used when the server supports them. */
  clientMetadataUrl?: string;
  /** Scopes to ask for when neither the challenge nor the resource metadata names any. */
  scopes?: string[];
  /** The redirect URI to use; default: a loopback URI `http://127.0.0.1:<free port>/callback`. */
  redirectUri?: string;
  /**
   * `"client_credentials"`: a machine-to-machine client (SEP-1046) that gets its tokens with
   * its own credentials (`clientSecret` or `privateKey`) whenever it needs one, with no user
   * and no `login`. Default `"authorization_code"`.
   */
  grant?: 'authorization_code' | 'client_credentials';
  /** A PKCS#8 private key in PEM: the client authenticates with a JWT it signs (`private_key_jwt`, RFC 7523). */
  privateKey?: string;
  /** The JWS algorithm of `privateKey` (ES256, RS256, PS256, EdDSA, …); default: from the key's type. */
  signingAlgorithm?: string;
}

/**
 * The client to use with an authorization server, in the MCP spec's order: the configured
 * client id, else a Client ID Metadata Document when the server supports them, else Dynamic
 * Client Registration (reusing an earlier registration for the same redirect URI).
 */
export async function resolveClient(
  http: OAuthHttp,
  as: oauth.AuthorizationServer,
  config: OAuthConfig,
  earlier: StoredClient | undefined,
  redirectUri: string,
  clientName: string,
): Promise<StoredClient> {
  if (config.clientId !== undefined) {
    const method = config.privateKey !== undefined ? 'private_key_jwt' : authMethodFor(as, config.clientSecret !== undefined);
    const client: StoredClient = { kind: 'preconfigured', clientId: config.clientId, authMethod: method };
    if (config.clientSecret !== undefined) client.clientSecret = config.clientSecret;
    return client;
  }
  if (config.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true) {
    return { kind: 'metadata-document', clientId: config.clientMetadataUrl, authMethod: 'none' };
  }
  if (typeof as.registration_endpoint === 'string') {
    if (earlier?.kind === 'dynamic' && (earlier.redirectUris ?? []).some((uri) => sameRedirect(uri, redirectUri))) return earlier;
    return register(http, as, redirectUri, clientName);
  }
  const cimd = config.clientMetadataUrl === undefined ? '' : ' nor Client ID Metadata Documents';
  throw authError(
    http,
    'auth-required',
    `the authorization server ${as.issuer} supports neither dynamic client registration${cimd}; configure "oauth": { "clientId": … } for this server`,
  );
}

type CryptoKeyOf<F extends (key: never, ...rest: never[]) => unknown> = Parameters<F>[0];

/** The token endpoint authentication to use, from what the server supports (RFC 8414 default: basic). */
export function authMethodFor(as: oauth.AuthorizationServer, hasSecret: boolean): TokenEndpointAuthMethod {
  if (!hasSecret) return 'none';
  const supported = as.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (supported.includes('client_secret_basic')) return 'client_secret_basic';
  if (supported.includes('client_secret_post')) return 'client_secret_post';
  return 'client_secret_basic';
}

/** oauth4webapi's client authentication for a stored client (`signingKey`: the configured `privateKey`, imported). */
export function clientAuth(client: StoredClient, signingKey?: webcrypto.CryptoKey): oauth.ClientAuth {
  if (client.authMethod === 'private_key_jwt' && signingKey !== undefined) return oauth.PrivateKeyJwt(signingKey as CryptoKeyOf<typeof oauth.PrivateKeyJwt>);
  if (client.authMethod === 'none' || client.clientSecret === undefined) return oauth.None();
  return client.authMethod === 'client_secret_post' ? oauth.ClientSecretPost(client.clientSecret) : secretBasic(client.clientSecret);
}

/**
 * `client_secret_basic` with id and secret form-urlencoded as RFC 6749 §2.3.1 says, by the
 * WHATWG serializer. The library also escapes `-_.!~*'()`, which authorization servers that
 * do not decode the credentials (the SDK's among them) then refuse: "pre%2Dregistered".
 */
function secretBasic(secret: string): oauth.ClientAuth {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return (_as, client, _body, headers) => {
    headers.set('authorization', `Basic ${Buffer.from(`${encode(client.client_id)}:${encode(secret)}`).toString('base64')}`);
  };
}

/** oauth4webapi's view of a stored client. */
export function libraryClient(client: StoredClient): oauth.Client {
  return { client_id: client.clientId, token_endpoint_auth_method: client.authMethod };
}

/** Equal, or both loopback IP redirects that differ only in the port (RFC 8252 §7.3). */
function sameRedirect(registered: string, wanted: string): boolean {
  if (registered === wanted) return true;
  try {
    const a = new URL(registered);
    const b = new URL(wanted);
    return a.protocol === 'http:' && b.protocol === 'http:' && isLoopback(a) && a.hostname === b.hostname && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

/**
 * The `application_type` to register (OpenID Connect Dynamic Registration, which the MCP spec
 * requires since SEP-837): a loopback or private-use-scheme redirect is a native application's
 * (a CLI, a desktop host); a redirect to a remote http(s) host is a web application's. OIDC
 * servers default an omitted type to "web" and then refuse a loopback redirect.
 */
export function applicationType(redirectUri: string): 'native' | 'web' {
  const url = URL.canParse(redirectUri) ? new URL(redirectUri) : undefined;
  if (url === undefined) return 'web';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'native';
  return isLoopback(url) ? 'native' : 'web';
}

async function register(http: OAuthHttp, as: oauth.AuthorizationServer, redirectUri: string, clientName: string): Promise<StoredClient> {
  const url = new URL(as.registration_endpoint as string);
  let registered: Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;
  try {
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: clientName,
        application_type: applicationType(redirectUri),
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      libraryOptions(http, url),
    );
    registered = await oauth.processDynamicClientRegistrationResponse(await withSecretExpiry(response));
  } catch (error) {
    throw fromLibraryError(http, error, 'client registration endpoint', url);
  }
  const secret = typeof registered.client_secret === 'string' ? registered.client_secret : undefined;
  const method = registered.token_endpoint_auth_method;
  const client: StoredClient = {
    kind: 'dynamic',
    clientId: registered.client_id,
    authMethod:
      method === 'client_secret_basic' || method === 'client_secret_post' || method === 'none'
        ? method
        : secret === undefined
          ? 'none'
          : 'client_secret_basic',
    redirectUris: Array.isArray(registered.redirect_uris) ? (registered.redirect_uris as string[]) : [redirectUri],
  };
  if (secret !== undefined) client.clientSecret = secret;
  return client;
}

/**
 * RFC 7591 requires `client_secret_expires_at` with a secret, but servers (the SDK's
 * among them) leave it out; the library then refuses the whole registration. Missing,
 * it is read as 0, "does not expire", which is what such a server means.
 */
async function withSecretExpiry(response: Response): Promise<Response> {
  if (!response.ok) return response;
  let body: unknown;
  try {
    body = await response.clone().json();
  } catch {
    return response; // the library reports what is wrong with it
  }
  const json = body as Record<string, unknown> | null;
  if (typeof json !== 'object' || json === null || typeof json.client_secret !== 'string' || json.client_secret_expires_at !== undefined) return response;
  await response.body?.cancel();
  return new Response(JSON.stringify({ ...json, client_secret_expires_at: 0 }), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The first problem of an `oauth` entry whose fields have the right types, as a field and a
 * message for the config reader to report (`oauth.<field> <message>`), or undefined.
 */
export function oauthConfigProblem(config: OAuthConfig): { field: keyof OAuthConfig; message: string } | undefined {
  const shown = (value: unknown) => JSON.stringify(value);
  if (config.clientId !== undefined && config.clientId.trim() === '') return { field: 'clientId', message: 'must not be empty' };
  if (config.clientSecret !== undefined && config.clientId === undefined) {
    return { field: 'clientSecret', message: 'needs "clientId": a secret belongs to a pre-registered client' };
  }
  if (config.privateKey !== undefined && config.clientId === undefined) {
    return { field: 'privateKey', message: 'needs "clientId": a signing key belongs to a pre-registered client' };
  }
  if (config.grant !== undefined && config.grant !== 'authorization_code' && config.grant !== 'client_credentials') {
    return { field: 'grant', message: `must be "authorization_code" or "client_credentials", got ${shown(config.grant)}` };
  }
  if (config.grant === 'client_credentials' && (config.clientId === undefined || (config.clientSecret === undefined && config.privateKey === undefined))) {
    return { field: 'grant', message: '"client_credentials" needs "clientId" and "clientSecret" or "privateKey"' };
  }
  if (config.signingAlgorithm !== undefined && config.privateKey === undefined) {
    return { field: 'signingAlgorithm', message: 'needs "privateKey"' };
  }
  if (config.privateKey !== undefined) {
    const problem = signingKeyProblem(config.privateKey, config.signingAlgorithm);
    if (problem !== undefined) return { field: problem.startsWith('signingAlgorithm') ? 'signingAlgorithm' : 'privateKey', message: problem.replace(/^(privateKey|signingAlgorithm) /, '') };
  }
  if (config.clientMetadataUrl !== undefined) {
    const url = URL.canParse(config.clientMetadataUrl) ? new URL(config.clientMetadataUrl) : undefined;
    if (!url || url.protocol !== 'https:' || url.pathname === '/') {
      return { field: 'clientMetadataUrl', message: `must be an https URL with a path (a Client ID Metadata Document), got ${shown(config.clientMetadataUrl)}` };
    }
  }
  for (const scope of config.scopes ?? []) {
    if (scope === '' || /\s/.test(scope)) return { field: 'scopes', message: `must hold scope names without spaces, got ${shown(scope)}` };
  }
  if (config.redirectUri !== undefined) {
    const url = URL.canParse(config.redirectUri) ? new URL(config.redirectUri) : undefined;
    if (!url || url.hash !== '') return { field: 'redirectUri', message: `must be an absolute URL without a fragment, got ${shown(config.redirectUri)}` };
  }
  return undefined;
}
