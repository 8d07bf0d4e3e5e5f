import type { AuthProvider } from '../auth-provider.js';
import type { Authorize, PendingAuthorization } from './authorization-code.js';
import type { OAuthConfig } from './client-registration.js';
import type { TokenStore } from './token-store.js';

// What the OAuth client of one server is given and offers: its types apart from the client
// (oauth-provider.ts), which loads oauth4webapi and is imported only on first authorization.

export type { Authorize, PendingAuthorization } from './authorization-code.js';

export interface OAuthProviderOptions {
  /** The server's name, in messages and in the token store key. */
  server: string;
  /** The server's configured URL: the protected resource. */
  resourceUrl: URL;
  /** The server's `oauth` config entry; default `{}` (discovery and dynamic registration). */
  config?: OAuthConfig;
  tokenStore: TokenStore;
  /** The interactive step {@link OAuthProvider.login} runs (and step-up, with `stepUp`). */
  authorize?: Authorize;
  /**
   * Whether a 403 `insufficient_scope` met by a request may run `authorize` to ask for the
   * larger scope; a function is asked at that moment (e.g. "is this a user's tool call?",
   * so that listings and health probes stay non-interactive). Default false: the request
   * rejects `auth-required` and the next `login` asks for the scope.
   */
  stepUp?: boolean | (() => boolean);
  /** Overrides `config.redirectUri`. */
  redirectUri?: string;
  /** `client_name` in dynamic registration; default "lazy-mcp". */
  clientName?: string;
  /** Default: the platform's fetch. */
  fetch?: typeof fetch;
  /** Bound of each request to the metadata, registration and token endpoints (ms); default 30000. */
  timeoutMs?: number;
  /** Step-ups allowed for one set of scopes before giving up; default 2. */
  maxStepUps?: number;
}

export interface LoginOptions {
  /** Replaces the provider's `authorize` for this login. */
  authorize?: Authorize;
  /** Replaces the provider's redirect URI for this login. */
  redirectUri?: string;
}

/** An {@link AuthProvider} for one server, plus the explicit, interactive steps. */
export interface OAuthProvider extends AuthProvider {
  readonly server: string;
  /** Runs the whole authorization flow now through `authorize`; resolves once tokens are stored. */
  login(options?: LoginOptions): Promise<void>;
  /**
   * Begins the authorization code flow without waiting for the user: discovery, registration
   * and the URL with its PKCE verifier and state kept; the redirect, whenever it comes,
   * goes to `complete`. Refused for a machine client (`client_credentials`), which has no user.
   */
  begin(options?: { redirectUri?: string }): Promise<PendingAuthorization>;
  /** Whether tokens are held for the server (they may still be expired or revoked). */
  hasTokens(): Promise<boolean>;
  /** A hash of the access token requests go out with now ('' with none): the authorization context. */
  context(): Promise<string>;
  /** Revokes the tokens where the authorization server allows it (best effort) and deletes them. */
  logout(): Promise<void>;
}
