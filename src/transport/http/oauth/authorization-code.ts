import * as oauth from 'oauth4webapi';
import { McpError } from '../../../errors.js';
import { libraryClient } from './client-registration.js';
import { assertSecure, authError, fromLibraryError, libraryOptions, loginHint, type OAuthHttp } from './oauth-http.js';
import type { StoredClient } from './token-store.js';

/** The host's interactive step: show `url` to the user, resolve with the redirect URL (code and state). */
export type Authorize = (url: URL, server: string) => Promise<URL>;

/** One authorization code grant: where, for whom, with what. */
export interface CodeGrant {
  as: oauth.AuthorizationServer;
  client: StoredClient;
  /** The client's authentication at the token endpoint, made when the code is exchanged. */
  auth: () => Promise<oauth.ClientAuth>;
  redirectUri: string;
  /** The resource indicator (RFC 8707). */
  resource: string;
  /** Space-separated; empty asks for none. */
  scope: string;
  /** The server's name, for messages. */
  server: string;
  authorize: Authorize;
}

/** An authorization begun by `OAuthProvider.begin`: its URL is out, its redirect not yet back. */
export interface PendingAuthorization {
  /** Where to send the user (client_id, redirect_uri, PKCE challenge, state, resource, scope). */
  url: URL;
  /** The state the redirect must carry back. */
  state: string;
  /** The redirect URI the URL names. */
  redirectUri: string;
  /** Takes the redirect (state and issuer checked), exchanges the code and stores the tokens. */
  complete(redirected: URL): Promise<void>;
}

/** One authorization code grant begun: the URL to send the user to, and the step that takes the redirect back. */
export interface StartedCodeGrant {
  /** The authorization URL (PKCE challenge, state, resource), checked to be https (http on loopback). */
  url: URL;
  /** The `state` the URL carries, which the redirect must bring back. */
  state: string;
  /** Checks the redirect (state, issuer, errors) and exchanges its code for tokens. */
  finish(redirected: URL): Promise<oauth.TokenEndpointResponse>;
}

/**
 * The authorization code flow with PKCE (RFC 7636), after discovery and registration: the
 * authorization URL the host opens, the redirect it brings back (state and issuer checked),
 * and the code exchanged for tokens.
 */
export async function authorizationCodeGrant(http: OAuthHttp, request: CodeGrant): Promise<oauth.TokenEndpointResponse> {
  const grant = await startCodeGrant(http, request);
  let redirected: URL;
  try {
    redirected = await request.authorize(grant.url, request.server);
  } catch (error) {
    if (error instanceof McpError) throw error;
    throw authError(http, 'auth-required', `the authorization was not completed (${(error as Error)?.message ?? String(error)}); ${loginHint(request.server)}`, {
      cause: error,
    });
  }
  return grant.finish(redirected);
}

/**
 * The first half of {@link authorizationCodeGrant}: the URL, with the verifier and state kept
 * in the returned step, so the redirect may come back later and by another road (a session's
 * `auth-required` hands the URL out; its user's redirect completes it).
 */
export async function startCodeGrant(http: OAuthHttp, request: Omit<CodeGrant, 'authorize'>): Promise<StartedCodeGrant> {
  const { as, client } = request;
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('redirect_uri', request.redirectUri);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', state);
  url.searchParams.set('resource', request.resource);
  if (request.scope !== '') url.searchParams.set('scope', request.scope);

  // Checked with the metadata already; again here, as this URL is what a browser (or the host) opens.
  assertSecure(http, url, 'authorization endpoint');
  const finish = async (redirected: URL): Promise<oauth.TokenEndpointResponse> => {
    const tokenUrl = new URL(as.token_endpoint as string);
    try {
      // Checks state and, when present or promised, the issuer (RFC 9207) before the code is used.
      const params = oauth.validateAuthResponse(as, libraryClient(client), redirected, state);
      const response = await oauth.authorizationCodeGrantRequest(as, libraryClient(client), await request.auth(), params, request.redirectUri, verifier, {
        ...libraryOptions(http, tokenUrl),
        additionalParameters: { resource: request.resource },
      });
      return await oauth.processAuthorizationCodeResponse(as, libraryClient(client), response);
    } catch (error) {
      throw fromLibraryError(http, error, 'authorization response', tokenUrl);
    }
  };
  return { url, state, finish };
}
