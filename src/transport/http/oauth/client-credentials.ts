import * as oauth from 'oauth4webapi';
import { authError, fromLibraryError, libraryOptions, type OAuthHttp } from './oauth-http.js';

/**
 * The client credentials grant (OAuth 2.1 §4.2; the MCP extension
 * `io.modelcontextprotocol/oauth-client-credentials`, SEP-1046): a machine-to-machine client
 * gets its tokens with its own credentials, no user and no browser, whenever it needs one.
 * It authenticates with a secret (`client_secret_basic` or `_post`) or a signed JWT
 * (`private_key_jwt`, RFC 7523; see signing-key.ts).
 */

/** One client credentials grant at `as`'s token endpoint, for `resource` (RFC 8707) and `scope`. */
export async function clientCredentialsGrant(
  http: OAuthHttp,
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  auth: oauth.ClientAuth,
  resource: string,
  scope: string,
): Promise<oauth.TokenEndpointResponse> {
  if (typeof as.token_endpoint !== 'string') throw authError(http, 'protocol-error', `the authorization server ${as.issuer} names no token endpoint`);
  const url = new URL(as.token_endpoint);
  const parameters = new URLSearchParams({ resource });
  if (scope !== '') parameters.set('scope', scope);
  try {
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, libraryOptions(http, url));
    return await oauth.processClientCredentialsResponse(as, client, response);
  } catch (error) {
    throw fromLibraryError(http, error, 'token endpoint', url);
  }
}
