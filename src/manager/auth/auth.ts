import { join } from 'node:path';
import { McpError, serverLabel } from '../../errors.js';
import type { Authorize, LoginOptions as ProviderLoginOptions, OAuthProvider, OAuthProviderOptions, PendingAuthorization } from '../../transport/http/oauth/provider-types.js';
import { authorizationContext, FileTokenStore, tokenStoreKey, type TokenStore } from '../../transport/http/oauth/token-store.js';
import type { ResolvedRemoteServer } from '../config/config.js';
import { defaultStateDir } from '../../util/state-dir.js';
import { PrincipalTokenStore } from '../principals/principal-tokens.js';
import { PendingLogins } from './pending-logins.js';

/** What the manager's options say about OAuth. */
export interface PoolAuthOptions {
  stateDir?: string;
  tokenStore?: TokenStore;
  authorize?: Authorize;
}

export interface LoginOptions {
  /**
   * Shows the authorization URL (a browser of the host's choosing follows it); the redirect
   * comes back to a loopback listener on 127.0.0.1. Default: the manager's `authorize`, else
   * the URL is printed on stderr and, on a desktop, opened.
   */
  openUrl?: (url: URL, server: string) => void;
  /** Replaces the whole interactive step: show `url`, resolve with the redirect URL. */
  authorize?: Authorize;
  /** How long the loopback listener waits for the redirect (ms); default 5 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * The OAuth providers of one pool: one per remote entry with `oauth`, sharing one token
 * store (default: files under `<stateDir>/oauth`, 0600 in a 0700 folder). A provider is
 * never interactive by itself; `login` is the only place a browser step runs, apart from
 * a step-up the host allowed by giving the manager an `authorize`.
 */
export class PoolAuth {
  private store: TokenStore | undefined;
  private readonly pending = new PendingLogins();
  private readonly providers = new Map<string, { url: string; provider: OAuthProvider }>();

  constructor(private readonly options: PoolAuthOptions) {}

  /**
   * The provider for `server`, or undefined for an entry without `oauth`. With `principal`
   * (a server run per principal): that principal's, whose tokens are kept apart from everyone else's.
   */
  providerFor(server: string, config: ResolvedRemoteServer, principal?: string): OAuthProvider | undefined {
    if (config.oauth === undefined) return undefined;
    const key = principal === undefined ? server : `${server}\0${principal}`;
    const known = this.providers.get(key);
    if (known && known.url === config.url) return known.provider;
    const authorize = this.options.authorize;
    const provider = new DeferredOAuthProvider({
      server,
      resourceUrl: new URL(config.url),
      config: config.oauth,
      tokenStore: principal === undefined ? this.tokenStore() : new PrincipalTokenStore(this.tokenStore(), principal),
      ...(authorize === undefined ? {} : { authorize, stepUp: true }),
    });
    this.providers.set(key, { url: config.url, provider });
    return provider;
  }

  /** Runs the authorization flow for `server` (for `principal`, when given) now; resolves once its tokens are stored. */
  async login(server: string, config: ResolvedRemoteServer | undefined, options: LoginOptions = {}, principal?: string): Promise<void> {
    const provider = config && this.providerFor(server, config, principal);
    if (!provider) {
      throw new McpError('invalid-arguments', `${serverLabel(server)}login needs an HTTP server with "oauth" in its config entry`, { server, phase: 'auth' });
    }
    const loopback = async () => (await import('../../transport/http/oauth/loopback-authorize.js')).loopbackAuthorize;
    const authorize =
      options.authorize ??
      (options.openUrl
        ? (await loopback())({ print: options.openUrl, open: false, ...pick(options) })
        : (this.options.authorize ?? (await loopback())(pick(options))));
    await provider.login({ authorize });
  }

  /**
   * The URL to send `principal`'s user to for `server` (a server run per principal, for
   * which that principal holds no usable token), with the authorization kept in wait:
   * its redirect stores the tokens for that principal and server only. Undefined for an
   * entry without `oauth` or a machine client (nobody to send anywhere).
   */
  async authorizationUrl(server: string, config: ResolvedRemoteServer, principal: string): Promise<URL | undefined> {
    const provider = this.providerFor(server, config, principal);
    if (!provider || config.oauth?.grant === 'client_credentials') return undefined;
    return this.pending.urlFor(`${server}\0${principal}\0${config.url}`, server, provider);
  }

  /** A redirect the host's own redirect URI received: completes the authorization in wait that handed its URL out. */
  completeLogin(redirected: string | URL): Promise<{ server: string }> {
    let url: URL;
    try {
      url = new URL(redirected);
    } catch (error) {
      throw new McpError('invalid-arguments', `completeLogin's redirect must be a URL, got ${JSON.stringify(String(redirected)).slice(0, 200)}`, { phase: 'auth', cause: error });
    }
    return this.pending.complete(url);
  }

  /** Gives up the authorizations in wait. Idempotent. */
  close(): void {
    this.pending.close();
  }

  private tokenStore(): TokenStore {
    this.store ??= this.options.tokenStore ?? new FileTokenStore(join(this.options.stateDir ?? defaultStateDir(), 'oauth'));
    return this.store;
  }
}

let oauthClient: Promise<typeof import('../../transport/http/oauth/oauth-provider.js')> | undefined;

/**
 * A server's OAuth provider before its first authorization: the OAuth client (and
 * oauth4webapi behind it) is loaded when a request first needs a token, a 401 or a login.
 * Whether tokens are held, and their context, are read from the store without it: a
 * listing served from the cache never loads the OAuth code.
 */
class DeferredOAuthProvider implements OAuthProvider {
  readonly server: string;
  private provider: Promise<OAuthProvider> | undefined;

  constructor(private readonly options: OAuthProviderOptions) {
    this.server = options.server;
  }

  private loaded(): Promise<OAuthProvider> {
    return (this.provider ??= (oauthClient ??= import('../../transport/http/oauth/oauth-provider.js')).then((module) => module.createOAuthProvider(this.options)));
  }

  async authorization(): Promise<string | undefined> {
    return (await this.loaded()).authorization();
  }

  async unauthorized(challenge: Parameters<OAuthProvider['unauthorized']>[0]): Promise<'retry'> {
    return (await this.loaded()).unauthorized(challenge);
  }

  async login(options?: ProviderLoginOptions): Promise<void> {
    return (await this.loaded()).login(options);
  }

  async begin(options?: { redirectUri?: string }): Promise<PendingAuthorization> {
    return (await this.loaded()).begin(options);
  }

  async logout(): Promise<void> {
    return (await this.loaded()).logout();
  }

  async hasTokens(): Promise<boolean> {
    if (this.provider) return (await this.provider).hasTokens();
    return (await this.stored())?.tokens !== undefined;
  }

  async context(): Promise<string> {
    if (this.provider) return (await this.provider).context();
    return authorizationContext((await this.stored())?.tokens?.accessToken);
  }

  private stored() {
    return this.options.tokenStore.get(tokenStoreKey(this.server, this.options.resourceUrl));
  }
}

function pick(options: LoginOptions): { timeoutMs?: number; signal?: AbortSignal } {
  return {
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
}
