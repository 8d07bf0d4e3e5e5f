import { join } from 'node:path';
import { McpError } from '../../../../src/errors.js';
import {
  createOAuthProvider,
  FileTokenStore,
  oauthConfigProblem,
  tokenStoreKey,
  type Authorize,
  type OAuthProviderOptions,
} from '../../../../src/transport/http/oauth/index.js';
import { tempDir } from '../../../support/temp-dirs.js';
import { callResource, followAuthorization, startOAuthFixture, type LoggedRequest, type OAuthFixture } from './oauth-fixture.js';

const fixtures: OAuthFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

async function fixture(options: Record<string, unknown> = {}): Promise<OAuthFixture> {
  const f = await startOAuthFixture(options);
  fixtures.push(f);
  return f;
}

function setup(f: OAuthFixture, options: Partial<OAuthProviderOptions> = {}) {
  const store = new FileTokenStore(join(tempDir(), 'oauth'));
  const authorizeCalls: URL[] = [];
  const authorize: Authorize = async (url) => {
    authorizeCalls.push(url);
    return followAuthorization(url);
  };
  const provider = createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: store, authorize, ...options });
  return { provider, store, authorizeCalls, key: tokenStoreKey('gh', f.resource) };
}

const requests = (log: LoggedRequest[], path: string) => log.filter((r) => r.path === path);
const form = (r: LoggedRequest) => new URLSearchParams(r.body);

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('OAuth provider against a local authorization server', () => {
  test('without a token it never interacts in the background: auth-required naming what to do', async () => {
    const f = await fixture();
    const { provider, authorizeCalls } = setup(f);
    expect(await provider.authorization()).toBeUndefined();
    const first = await fetch(f.resource, { method: 'POST', body: '{}' });
    const error = await rejection(
      provider.unauthorized({ status: 401, wwwAuthenticate: first.headers.get('www-authenticate'), resourceUrl: f.resource }),
    );
    expect(error.code).toBe('auth-required');
    expect(error.message).toBe('server "gh": needs authorization; call login("gh") or run `lazy-mcp login gh`');
    expect(error).toMatchObject({ server: 'gh', phase: 'auth', status: 401 });
    expect(authorizeCalls).toHaveLength(0);
    expect(requests(await f.log(), '/authorize')).toHaveLength(0);
  });

  test('login: discovery from the challenge, dynamic registration, PKCE S256 and resource on both requests', async () => {
    const f = await fixture();
    const { provider, authorizeCalls } = setup(f);
    const before = await callResource(provider, f.resource).catch((e: unknown) => e);
    expect((before as McpError).code).toBe('auth-required');

    await provider.login();
    expect(authorizeCalls).toHaveLength(1);
    const response = await callResource(provider, f.resource);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: { scope: 'read' } });

    const log = await f.log();
    const paths = log.map((r) => r.path);
    // The challenge's resource_metadata, then RFC 8414 metadata, then registration.
    expect(paths.indexOf('/.well-known/oauth-protected-resource/mcp')).toBeLessThan(paths.indexOf('/.well-known/oauth-authorization-server'));
    expect(paths).not.toContain('/.well-known/oauth-protected-resource');
    const [registration] = requests(log, '/register');
    expect(JSON.parse(registration.body)).toMatchObject({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] });

    const query = authorizeCalls[0].searchParams;
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('resource')).toBe(f.resource.href);
    expect(query.get('scope')).toBe('read'); // the challenge's scope
    expect(query.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(query.get('client_id')).toMatch(/^dyn-/);
    const [token] = requests(log, '/token');
    expect(form(token).get('grant_type')).toBe('authorization_code');
    expect(form(token).get('resource')).toBe(f.resource.href);
    expect(form(token).get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(token.authorization).toBeUndefined(); // a public client
  });

  test('a pre-configured confidential client authenticates with client_secret_basic; no registration', async () => {
    const f = await fixture({ dcr: false, clients: [{ client_id: 'pre-1', client_secret: 's3cr:et', method: 'client_secret_basic' }] });
    const { provider, authorizeCalls } = setup(f, { config: { clientId: 'pre-1', clientSecret: 's3cr:et' } });
    await provider.login();
    expect(authorizeCalls[0].searchParams.get('client_id')).toBe('pre-1');
    expect((await callResource(provider, f.resource)).status).toBe(200);
    const log = await f.log();
    expect(requests(log, '/register')).toHaveLength(0);
    const [token] = requests(log, '/token');
    expect(token.authorization).toMatch(/^Basic /);
    expect(form(token).has('client_secret')).toBe(false);
  });

  test('client_secret_post when that is all the server supports', async () => {
    const f = await fixture({ dcr: false, authMethods: ['client_secret_post'], clients: [{ client_id: 'pre-2', client_secret: 'pw', method: 'client_secret_post' }] });
    const { provider } = setup(f, { config: { clientId: 'pre-2', clientSecret: 'pw' } });
    await provider.login();
    const [token] = requests(await f.log(), '/token');
    expect(token.authorization).toBeUndefined();
    expect(form(token).get('client_secret')).toBe('pw');
  });

  test('a Client ID Metadata Document comes before dynamic registration when the server supports them', async () => {
    const f = await fixture({ cimd: true });
    const metadataUrl = `${f.url}/client-metadata.json`;
    const { provider, authorizeCalls } = setup(f, { config: { clientMetadataUrl: metadataUrl } });
    await provider.login();
    expect(authorizeCalls[0].searchParams.get('client_id')).toBe(metadataUrl);
    expect(requests(await f.log(), '/register')).toHaveLength(0);
    expect((await callResource(provider, f.resource)).status).toBe(200);
  });

  test('no client id, no metadata document support and no registration endpoint: auth-required saying to configure one', async () => {
    const f = await fixture({ dcr: false });
    const { provider, authorizeCalls } = setup(f);
    const error = await rejection(provider.login());
    expect(error.code).toBe('auth-required');
    expect(error.message).toMatch(/^server "gh": the authorization server .* supports neither dynamic client registration; configure "oauth": \{ "clientId": … \}/);
    expect(authorizeCalls).toHaveLength(0);
  });

  test('an access token about to expire is refreshed before it is sent, with the resource', async () => {
    const f = await fixture({ accessTtl: 5 });
    const { provider } = setup(f);
    await provider.login();
    const response = await callResource(provider, f.resource);
    expect(response.status).toBe(200);
    const tokens = requests(await f.log(), '/token').map(form);
    expect(tokens.map((t) => t.get('grant_type'))).toEqual(['authorization_code', 'refresh_token']);
    expect(tokens[1].get('resource')).toBe(f.resource.href);
  });

  test('a 401 for a held token refreshes it and retries, without interaction', async () => {
    const f = await fixture();
    const { provider, authorizeCalls } = setup(f);
    await provider.login();
    await fetch(`${f.url}/_expire`, { method: 'POST' });
    const response = await callResource(provider, f.resource);
    expect(response.status).toBe(200);
    expect(authorizeCalls).toHaveLength(1);
    expect(requests(await f.log(), '/token').map((t) => form(t).get('grant_type'))).toEqual(['authorization_code', 'refresh_token']);
  });

  test('its authorization context is a hash of the access token held, and changes with the token', async () => {
    const f = await fixture();
    const { provider, store, key } = setup(f);
    expect(await provider.context()).toBe('');
    await provider.login();
    const first = await provider.context();
    const token = (await store.get(key))!.tokens!.accessToken;
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(first).not.toContain(token);
    await fetch(`${f.url}/_expire`, { method: 'POST' });
    expect((await callResource(provider, f.resource)).status).toBe(200);
    expect(await provider.context()).not.toBe(first);
  });

  test('a revoked refresh token: the tokens are deleted and the call is auth-required', async () => {
    const f = await fixture();
    const { provider, store, key, authorizeCalls } = setup(f);
    await provider.login();
    const record = await store.get(key);
    const revoke = await fetch(`${f.url}/revoke`, { method: 'POST', body: new URLSearchParams({ token: record!.tokens!.refreshToken! }) });
    expect(revoke.status).toBe(200);
    await fetch(`${f.url}/_expire`, { method: 'POST' });

    const error = await rejection(callResource(provider, f.resource));
    expect(error.code).toBe('auth-required');
    expect(error.message).toMatch(/^server "gh": needs authorization again, the refresh token was refused \(invalid_grant\); call login\("gh"\)/);
    expect(authorizeCalls).toHaveLength(1);
    const after = await store.get(key);
    expect(after?.tokens).toBeUndefined();
    expect(after?.client.kind).toBe('dynamic'); // the registration is kept for the next login
    expect(await provider.hasTokens()).toBe(false);
    expect(await provider.authorization()).toBeUndefined();
  });

  test('step-up on 403 insufficient_scope asks for the union of scopes, when allowed to', async () => {
    const f = await fixture();
    const { provider, authorizeCalls } = setup(f, { stepUp: true });
    await provider.login();
    const response = await callResource(provider, f.resource, 'tools/call');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: { scope: 'read write' } });
    expect(authorizeCalls.map((u) => u.searchParams.get('scope'))).toEqual(['read', 'read write']);
  });

  test('step-up without permission to interact is auth-required, and the next login asks for the scope', async () => {
    const f = await fixture();
    const { provider, authorizeCalls } = setup(f);
    await provider.login();
    const error = await rejection(callResource(provider, f.resource, 'tools/call'));
    expect(error.code).toBe('auth-required');
    expect(error.message).toBe('server "gh": needs more authorization (scope "read write"); call login("gh") or run `lazy-mcp login gh`');
    expect(error.status).toBe(403);
    expect(authorizeCalls).toHaveLength(1);
    await provider.login();
    expect(authorizeCalls[1].searchParams.get('scope')).toBe('read write');
    expect((await callResource(provider, f.resource, 'tools/call')).status).toBe(200);
  });

  test('step-up gives up after its retry limit when the server never grants the scope', async () => {
    const f = await fixture();
    let calls = 0;
    // A user who approves only "read", whatever is asked.
    const stingy: Authorize = async (url) => {
      calls++;
      url.searchParams.set('scope', 'read');
      return followAuthorization(url);
    };
    const { provider } = setup(f, { stepUp: true, authorize: stingy, maxStepUps: 2 });
    await provider.login();
    expect((await callResource(provider, f.resource, 'tools/call')).status).toBe(403);
    expect((await callResource(provider, f.resource, 'tools/call')).status).toBe(403);
    const error = await rejection(callResource(provider, f.resource, 'tools/call'));
    expect(error.code).toBe('auth-required');
    expect(error.message).toMatch(/still lacks authorization \(scope "read write"\) after 2 step-up attempts/);
    expect(calls).toBe(3); // the login and two step-ups
  });

  test('metadata that claims another issuer is refused', async () => {
    const f = await fixture({ wrongIssuer: true });
    const { provider, authorizeCalls } = setup(f);
    const error = await rejection(provider.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toContain(`claims issuer "${f.url}/someone-else", not "${f.url}"; refusing it`);
    expect(authorizeCalls).toHaveLength(0);
  });

  test('an authorization server without PKCE S256 is refused', async () => {
    const f = await fixture({ noS256: true });
    const { provider, authorizeCalls } = setup(f);
    const error = await rejection(provider.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toMatch(/does not advertise PKCE S256 \(code_challenge_methods_supported: \["plain"\]\)/);
    expect(authorizeCalls).toHaveLength(0);
  });

  test('well-known discovery without resource_metadata, and an issuer with a path (path insertion)', async () => {
    const f = await fixture({ prmInHeader: false, issuerPath: '/tenant', challengeScope: '' });
    const { provider, authorizeCalls } = setup(f, { config: { scopes: ['ignored'] } });
    await provider.login();
    const paths = (await f.log()).map((r) => r.path);
    expect(paths).toContain('/.well-known/oauth-protected-resource/mcp');
    expect(paths).toContain('/.well-known/oauth-authorization-server/tenant');
    expect(paths.filter((p) => p.includes('openid-configuration'))).toEqual([]);
    // No scope in the challenge: the resource's scopes_supported.
    expect(authorizeCalls[0].searchParams.get('scope')).toBe('read write');
    expect((await callResource(provider, f.resource)).status).toBe(200);
  });

  test('a redirect with the wrong state is refused before the code is used', async () => {
    const f = await fixture();
    const forged: Authorize = async (url) => {
      const back = await followAuthorization(url);
      back.searchParams.set('state', 'forged');
      return back;
    };
    const { provider } = setup(f, { authorize: forged });
    const error = await rejection(provider.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toMatch(/state/);
    expect(requests(await f.log(), '/token')).toHaveLength(0);
  });

  test('login without an authorize callback says what to do', async () => {
    const f = await fixture();
    const { provider } = setup(f, { authorize: undefined });
    const error = await rejection(provider.login());
    expect(error.code).toBe('auth-required');
    expect(error.message).toMatch(/login needs an `authorize` callback/);
  });

  test('tokens written by another process (lazy-mcp login) are picked up on the next 401', async () => {
    const f = await fixture();
    const dir = join(tempDir(), 'oauth');
    const background = createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: new FileTokenStore(dir) });
    const cli = createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: new FileTokenStore(dir), authorize: followAuthorization });
    await rejection(callResource(background, f.resource));
    await cli.login();
    expect((await callResource(background, f.resource)).status).toBe(200);
  });

  test('logout revokes the tokens at the server and deletes them', async () => {
    const f = await fixture();
    const { provider, store, key } = setup(f);
    await provider.login();
    await provider.logout();
    expect(await store.get(key)).toBeUndefined();
    expect(requests(await f.log(), '/revoke')).toHaveLength(2);
  });

  test('a redirect naming another issuer (RFC 9207 mix-up) is refused before the code is used', async () => {
    const f = await fixture();
    const mixedUp: Authorize = async (url) => {
      const back = await followAuthorization(url);
      back.searchParams.set('iss', 'https://attacker.example');
      return back;
    };
    const { provider } = setup(f, { authorize: mixedUp });
    const error = await rejection(provider.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toMatch(/"iss"/);
    expect(requests(await f.log(), '/token')).toHaveLength(0);
  });

  test('a login with no challenge seen yet probes the server for one', async () => {
    const f = await fixture();
    const { provider } = setup(f);
    await provider.login();
    const [probe] = (await f.log()).filter((r) => r.path === '/mcp');
    expect(probe.method).toBe('GET');
    expect(probe.authorization).toBeUndefined();
  });

  test('concurrent 401s share one refresh', async () => {
    const f = await fixture();
    const { provider } = setup(f);
    await provider.login();
    await fetch(`${f.url}/_expire`, { method: 'POST' });
    const responses = await Promise.all(Array.from({ length: 6 }, () => callResource(provider, f.resource)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const grants = requests(await f.log(), '/token').map((t) => form(t).get('grant_type'));
    expect(grants).toEqual(['authorization_code', 'refresh_token']);
  });

  test('stepUp as a function is asked at the moment of the challenge', async () => {
    const f = await fixture();
    let interactive = false;
    const { provider, authorizeCalls } = setup(f, { stepUp: () => interactive });
    await provider.login();
    expect((await rejection(callResource(provider, f.resource, 'tools/call'))).code).toBe('auth-required');
    expect(authorizeCalls).toHaveLength(1);
    interactive = true;
    expect((await callResource(provider, f.resource, 'tools/call')).status).toBe(200);
    expect(authorizeCalls).toHaveLength(2);
  });
});

describe('oauthConfigProblem', () => {
  test('names the field and the value', () => {
    expect(oauthConfigProblem({})).toBeUndefined();
    expect(oauthConfigProblem({ clientId: 'a', clientSecret: 'b', scopes: ['repo'], redirectUri: 'http://127.0.0.1:8080/cb' })).toBeUndefined();
    expect(oauthConfigProblem({ clientSecret: 'b' })).toEqual({ field: 'clientSecret', message: 'needs "clientId": a secret belongs to a pre-registered client' });
    expect(oauthConfigProblem({ clientMetadataUrl: 'http://app.example/client.json' })).toEqual({
      field: 'clientMetadataUrl',
      message: 'must be an https URL with a path (a Client ID Metadata Document), got "http://app.example/client.json"',
    });
    expect(oauthConfigProblem({ scopes: ['read write'] })?.field).toBe('scopes');
    expect(oauthConfigProblem({ redirectUri: 'callback' })?.field).toBe('redirectUri');
  });
});
