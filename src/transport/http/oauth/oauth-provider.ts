import type { webcrypto } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { McpError } from '../../../errors.js';
import { type Authorize, authorizationCodeGrant, type CodeGrant, type PendingAuthorization, startCodeGrant } from './authorization-code.js';
import type { LoginOptions, OAuthProvider, OAuthProviderOptions } from './provider-types.js';
import { parseBearerChallenge, type BearerChallenge } from './bearer-challenge.js';
import { clientCredentialsGrant } from './client-credentials.js';
import { clientAuth, libraryClient, resolveClient, type OAuthConfig } from './client-registration.js';
import { discoverAuthorizationServer, discoverResource, probeChallenge } from './discovery.js';
import { authError, fromLibraryError, libraryOptions, loginHint, type OAuthHttp } from './oauth-http.js';
import { importSigningKey } from './signing-key.js';
import { guardedFetch } from './url-guard.js';
import { loopbackRedirectUri } from './loopback-authorize.js';
import { chooseScopes, splitScopes, storedTokens, union } from './scopes.js';
import { authorizationContext, tokenStoreKey, type OAuthRecord } from './token-store.js';

/** An access token this close to its expiry is refreshed before it is sent. */
const expiryMarginMs = 10_000;
/** A 401 for a token this fresh most likely answered a request sent with the one before. */
const freshTokenMs = 5_000;

/** The OAuth client of one MCP server, as the MCP authorization spec describes it. */
export function createOAuthProvider(options: OAuthProviderOptions): OAuthProvider {
  return new McpOAuthProvider(options);
}

class McpOAuthProvider implements OAuthProvider {
  readonly server: string;
  private readonly options: OAuthProviderOptions;
  private readonly config: OAuthConfig;
  private readonly http: OAuthHttp;
  private readonly key: string;
  private record: OAuthRecord | undefined;
  /** When the held access token was obtained by this process (ms), to tell a stale 401 from a real one. */
  private obtainedAt = 0;
  private readonly metadata = new Map<string, oauth.AuthorizationServer>();
  private lastChallenge: BearerChallenge | undefined;
  /** Scopes a step-up challenge asked for that no token has yet: the next flow asks for them too. */
  private readonly wanted = new Set<string>();
  private readonly stepUps = new Map<string, number>();
  private flight: Promise<void> | undefined;
  private saves = 0;
  /** `oauth.privateKey` imported for signing, once, when first needed. */
  private signing: Promise<webcrypto.CryptoKey> | undefined;

  constructor(options: OAuthProviderOptions) {
    this.options = options;
    this.server = options.server;
    this.config = options.config ?? {};
    // Every request of the OAuth client (ours and the library's) goes through the same guard.
    this.http = { server: options.server, fetch: guardedFetch(options.server, options.fetch ?? fetch), timeoutMs: options.timeoutMs ?? 30_000 };
    this.key = tokenStoreKey(options.server, options.resourceUrl);
  }

  async authorization(): Promise<string | undefined> {
    if (!this.record?.tokens) await this.reload();
    const tokens = this.record?.tokens;
    if (!tokens) return undefined;
    // A machine client gets a new token before its token expires; it has no one to ask.
    if (this.machine && tokens.expiresAt !== undefined && tokens.expiresAt - expiryMarginMs <= Date.now()) {
      await this.exclusive(() => this.clientCredentialsFlow());
      return this.header();
    }
    if (tokens.refreshToken && tokens.expiresAt !== undefined && tokens.expiresAt - expiryMarginMs <= Date.now()) {
      try {
        await this.exclusive(() => this.refresh());
      } catch (error) {
        // A refused refresh token has been deleted: the request goes without and meets its 401.
        if (!(error instanceof McpError && error.code === 'auth-required')) throw error;
        return undefined;
      }
    }
    return this.header();
  }

  async unauthorized(challenge: { status: 401 | 403; wwwAuthenticate: string | null; resourceUrl: URL; authorization?: string }): Promise<'retry'> {
    const parsed = await parseBearerChallenge(challenge.wwwAuthenticate);
    if (parsed) this.lastChallenge = parsed;
    if (this.flight) {
      await this.flight.catch(() => {});
      if (this.record?.tokens) return 'retry';
    }
    const before = this.header();
    await this.reload();
    const current = this.header();
    // Another request (or another process, through the store) renewed the token meanwhile.
    if (current !== undefined && current !== before) return 'retry';
    if (current !== undefined && challenge.authorization !== undefined && challenge.authorization !== current) return 'retry';
    if (this.machine) return this.machineRetry(parsed, challenge.status, current, challenge.authorization);
    if (challenge.status === 403 && parsed?.error === 'insufficient_scope') return this.stepUp(parsed, challenge.status);
    if (current !== undefined && challenge.authorization === undefined && Date.now() - this.obtainedAt < freshTokenMs) return 'retry';
    if (this.record?.tokens?.refreshToken) {
      await this.exclusive(() => this.refresh());
      return 'retry';
    }
    throw this.needsLogin(challenge.status);
  }

  async login(options: LoginOptions = {}): Promise<void> {
    if (this.machine) {
      while (this.flight) await this.flight.catch(() => {});
      return this.exclusive(() => this.clientCredentialsFlow());
    }
    const authorize = options.authorize ?? this.options.authorize;
    if (!authorize) {
      throw authError(
        this.http,
        'auth-required',
        `login needs an \`authorize\` callback to show the authorization URL; give the manager one or run \`lazy-mcp login ${this.server}\``,
      );
    }
    while (this.flight) await this.flight.catch(() => {});
    await this.exclusive(() => this.authorizeFlow(authorize, undefined, options.redirectUri));
    this.stepUps.clear();
  }

  async begin(options: { redirectUri?: string } = {}): Promise<PendingAuthorization> {
    if (this.machine) throw authError(this.http, 'invalid-arguments', 'uses the client credentials grant ("grant": "client_credentials"): there is no user to send to an authorization URL');
    const prepared = await this.prepareCodeGrant(undefined, options.redirectUri);
    const grant = await startCodeGrant(this.http, prepared.request);
    return {
      url: grant.url,
      state: grant.state,
      redirectUri: prepared.request.redirectUri,
      complete: async (redirected) => {
        while (this.flight) await this.flight.catch(() => {});
        await this.exclusive(async () => this.granted(prepared.base, await grant.finish(redirected), prepared.request.scope));
        this.stepUps.clear();
      },
    };
  }

  /**
   * Which authorization context requests go out in now: a hash of the stored access token
   * ('' with none), so a listing the server marked private is served to that token only.
   */
  async context(): Promise<string> {
    await this.reload();
    return authorizationContext(this.record?.tokens?.accessToken);
  }

  async hasTokens(): Promise<boolean> {
    await this.reload();
    return this.record?.tokens !== undefined;
  }

  async logout(): Promise<void> {
    await this.reload();
    const record = this.record;
    if (record?.tokens) {
      try {
        const as = await this.authorizationServer(record.issuer, record.legacy === true);
        if (typeof as.revocation_endpoint === 'string') {
          const url = new URL(as.revocation_endpoint);
          for (const token of [record.tokens.refreshToken, record.tokens.accessToken]) {
            if (token === undefined) continue;
            const response = await oauth.revocationRequest(as, libraryClient(record.client), clientAuth(record.client, await this.signingKey()), token, libraryOptions(this.http, url));
            await oauth.processRevocationResponse(response);
          }
        }
      } catch {
        // Revocation is a courtesy to the server; the tokens are deleted here either way.
      }
    }
    this.record = undefined;
    await this.options.tokenStore.delete(this.key);
  }

  private header(): string | undefined {
    const tokens = this.record?.tokens;
    return tokens ? `Bearer ${tokens.accessToken}` : undefined;
  }

  private async reload(): Promise<void> {
    const saves = this.saves;
    const stored = await this.options.tokenStore.get(this.key);
    // A save during the read is newer than what was read.
    if (saves !== this.saves) return;
    if (stored?.tokens?.accessToken !== this.record?.tokens?.accessToken) this.obtainedAt = 0;
    this.record = stored;
  }

  private async save(record: OAuthRecord): Promise<void> {
    this.saves++;
    this.record = record;
    await this.options.tokenStore.set(this.key, record);
  }

  /** Runs `fn` unless a renewal is already in flight, which the caller then joins. */
  private exclusive(fn: () => Promise<void>): Promise<void> {
    if (this.flight) return this.flight;
    const flight = fn().finally(() => {
      this.flight = undefined;
    });
    this.flight = flight;
    return flight;
  }

  private needsLogin(status?: number): McpError {
    return new McpError('auth-required', `server ${JSON.stringify(this.server)}: needs authorization; ${loginHint(this.server)}`, {
      server: this.server,
      phase: 'auth',
      ...(status === undefined ? {} : { status }),
    });
  }

  private async stepUp(challenge: BearerChallenge, status: number): Promise<'retry'> {
    for (const scope of splitScopes(challenge.scope)) this.wanted.add(scope);
    const scopes = union(splitScopes(this.record?.tokens?.scope), this.wanted);
    const needed = challenge.scope ? ` (scope "${challenge.scope}")` : '';
    const stepUp = this.options.stepUp;
    const allowed = typeof stepUp === 'function' ? stepUp() : stepUp === true;
    if (!allowed || !this.options.authorize) {
      throw new McpError(
        'auth-required',
        `server ${JSON.stringify(this.server)}: needs more authorization${needed}; ${loginHint(this.server)}`,
        { server: this.server, phase: 'auth', status },
      );
    }
    const key = [...scopes].sort().join(' ');
    const tries = this.stepUps.get(key) ?? 0;
    const limit = this.options.maxStepUps ?? 2;
    if (tries >= limit) {
      throw new McpError(
        'auth-required',
        `server ${JSON.stringify(this.server)}: still lacks authorization${needed} after ${limit} step-up attempts; ${loginHint(this.server)}`,
        { server: this.server, phase: 'auth', status },
      );
    }
    this.stepUps.set(key, tries + 1);
    const authorize = this.options.authorize;
    await this.exclusive(() => this.authorizeFlow(authorize, scopes));
    return 'retry';
  }

  /** `legacy`: the 2025-03-26 rules (the server's origin, no issuer check, default endpoints). */
  private async authorizationServer(issuer: string, legacy: boolean): Promise<oauth.AuthorizationServer> {
    let as = this.metadata.get(issuer);
    if (!as) {
      as = await discoverAuthorizationServer(this.http, issuer, legacy);
      this.metadata.set(issuer, as);
    }
    return as;
  }

  private async refresh(): Promise<void> {
    const record = this.record;
    const refreshToken = record?.tokens?.refreshToken;
    if (!record?.tokens || refreshToken === undefined) throw this.needsLogin();
    const as = await this.authorizationServer(record.issuer, record.legacy === true);
    const url = new URL(as.token_endpoint as string);
    let result: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.refreshTokenGrantRequest(as, libraryClient(record.client), clientAuth(record.client, await this.signingKey()), refreshToken, {
        ...libraryOptions(this.http, url),
        additionalParameters: { resource: record.resource },
      });
      result = await oauth.processRefreshTokenResponse(as, libraryClient(record.client), response);
    } catch (error) {
      const failure = fromLibraryError(this.http, error, 'token endpoint', url);
      if (failure.code === 'auth-required') {
        // The refresh token is revoked or expired: forget the tokens, keep the registration.
        const { tokens: _refused, ...registration } = record;
        await this.save(registration);
        throw new McpError(
          'auth-required',
          `server ${JSON.stringify(this.server)}: needs authorization again, the refresh token was refused (${(error as { error?: string }).error ?? failure.message}); ${loginHint(this.server)}`,
          { server: this.server, phase: 'auth', cause: failure, ...(failure.status === undefined ? {} : { status: failure.status }) },
        );
      }
      throw failure;
    }
    await this.save({ ...record, tokens: storedTokens(result, record.tokens.scope, refreshToken) });
    this.obtainedAt = Date.now();
  }

  /** Discovery, the first step of every grant: the resource's metadata and its authorization server. */
  private async discover() {
    const challenge = this.lastChallenge ?? (await probeChallenge(this.http, this.options.resourceUrl));
    const discovered = await discoverResource(this.http, this.options.resourceUrl, challenge?.resourceMetadata);
    await this.reload();
    const earlier = this.record;
    const servers = discovered.metadata.authorization_servers as string[];
    // Registration and tokens belong to one authorization server; keep using the one we know.
    const issuer = earlier && servers.includes(earlier.issuer) ? earlier.issuer : servers[0];
    const as = await this.authorizationServer(issuer, discovered.legacy === true);
    return { challenge, discovered, earlier, issuer, as };
  }

  /** The authorization code flow with PKCE, from discovery to stored tokens. */
  private async authorizeFlow(authorize: Authorize, scopes: Set<string> | undefined, redirectOverride?: string): Promise<void> {
    const { base, request } = await this.prepareCodeGrant(scopes, redirectOverride);
    await this.granted(base, await authorizationCodeGrant(this.http, { ...request, authorize }), request.scope);
  }

  /** Discovery and registration for a code grant: what the grant asks for, and the record its tokens complete. */
  private async prepareCodeGrant(scopes: Set<string> | undefined, redirectOverride?: string): Promise<{ base: OAuthRecord; request: Omit<CodeGrant, 'authorize'> }> {
    const { challenge, discovered, earlier, issuer, as } = await this.discover();
    const redirectUri = redirectOverride ?? this.options.redirectUri ?? this.config.redirectUri ?? (await loopbackRedirectUri());
    const client = await resolveClient(
      this.http,
      as,
      this.config,
      earlier?.issuer === issuer ? earlier.client : undefined,
      redirectUri,
      this.options.clientName ?? 'lazy-mcp',
    );
    const base: OAuthRecord = { version: 1, server: this.server, resource: discovered.resource, issuer, client, ...(discovered.legacy ? { legacy: true } : {}) };
    const kept = earlier?.issuer === issuer && earlier.resource === discovered.resource ? earlier.tokens : undefined;
    // The registration is kept even if the user never completes the authorization.
    if (client !== earlier?.client) await this.save(kept ? { ...base, tokens: kept } : base);

    const scope = [...union(scopes ?? chooseScopes(challenge, discovered, this.config), this.wanted)].join(' ');
    return { base, request: { as, client, auth: async () => clientAuth(client, await this.signingKey()), redirectUri, resource: discovered.resource, scope, server: this.server } };
  }

  /** Stores what a grant gave; the scopes it granted are no longer wanted. */
  private async granted(base: OAuthRecord, result: oauth.TokenEndpointResponse, scope: string): Promise<void> {
    await this.save({ ...base, tokens: storedTokens(result, scope === '' ? undefined : scope) });
    this.obtainedAt = Date.now();
    for (const granted of splitScopes(result.scope ?? scope)) this.wanted.delete(granted);
  }

  /** Whether this is a machine-to-machine client (`grant: "client_credentials"`). */
  private get machine(): boolean {
    return this.config.grant === 'client_credentials';
  }

  private signingKey(): Promise<webcrypto.CryptoKey | undefined> {
    const pem = this.config.privateKey;
    if (pem === undefined) return Promise.resolve(undefined);
    this.signing ??= importSigningKey(pem, this.config.signingAlgorithm);
    return this.signing;
  }

  /**
   * A machine client's answer to a 401 or 403: a new token by the client credentials grant
   * (with the scopes a 403 `insufficient_scope` names), then the request again. A token
   * this grant gave moments ago and the server refused anyway will not be bettered by
   * another: that is `auth-required`, not a loop.
   */
  private async machineRetry(challenge: BearerChallenge | undefined, status: 401 | 403, current: string | undefined, sent: string | undefined): Promise<'retry'> {
    const refusedFresh = current !== undefined && sent === current && Date.now() - this.obtainedAt < freshTokenMs;
    const newScopes = status === 403 && challenge?.error === 'insufficient_scope' ? [...splitScopes(challenge.scope)].filter((s) => !splitScopes(this.record?.tokens?.scope).has(s)) : [];
    if (refusedFresh && newScopes.length === 0) {
      throw new McpError('auth-required', `server ${JSON.stringify(this.server)}: refused the token its client credentials grant just gave (HTTP ${status}); check the client's grants at the authorization server`, {
        server: this.server,
        phase: 'auth',
        status,
      });
    }
    for (const scope of newScopes) this.wanted.add(scope);
    await this.exclusive(() => this.clientCredentialsFlow());
    return 'retry';
  }

  /** The client credentials grant, from discovery to stored tokens: no user, no redirect. */
  private async clientCredentialsFlow(): Promise<void> {
    const { challenge, discovered, earlier, issuer, as } = await this.discover();
    const client = await resolveClient(this.http, as, this.config, undefined, '', this.options.clientName ?? 'lazy-mcp');
    const scope = [...union(union(chooseScopes(challenge, discovered, this.config), splitScopes(earlier?.tokens?.scope)), this.wanted)].join(' ');
    const result = await clientCredentialsGrant(this.http, as, libraryClient(client), clientAuth(client, await this.signingKey()), discovered.resource, scope);
    const base: OAuthRecord = { version: 1, server: this.server, resource: discovered.resource, issuer, client, ...(discovered.legacy ? { legacy: true } : {}) };
    await this.granted(base, result, scope);
  }
}
