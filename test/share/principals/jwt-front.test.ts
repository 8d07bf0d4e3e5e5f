import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from 'jose';
import { McpServerManager } from '../../../src/manager/manager.js';
import { type ServeGatewayOptions, serveGateway } from '../../../src/gateway/serve-gateway.js';
import type { JwtAuthOptions } from '../../../src/share/principals/jwt-front.js';
import { fixture } from '../../support/fixtures.js';

const ISSUER = 'https://issuer.example.invalid';
const AUDIENCE = 'https://gateway.example.invalid/mcp';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let k1: KeyPair;
let k2: KeyPair;
beforeAll(async () => {
  [k1, k2] = await Promise.all([generateKeyPair('ES256'), generateKeyPair('ES256')]);
});

/** A JWKS endpoint on loopback serving `keys()`, counting its fetches. */
async function jwksServer(keys: () => Promise<JWK[]>) {
  const state = { fetches: 0 };
  const server: Server = createServer((_req, res) => {
    state.fetches++;
    void keys().then((list) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: list })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`, state };
}

const publicJwk = async (pair: KeyPair, kid: string): Promise<JWK> => ({ ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' });

async function token(claims: Record<string, unknown> = {}, options: { key?: KeyPair; kid?: string; iss?: string; aud?: string; exp?: number | string; nbf?: number; sub?: string } = {}): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1' })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setSubject(options.sub ?? 'alice')
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m');
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign((options.key ?? k1).privateKey);
}

async function gateway(extra: Partial<JwtAuthOptions> = {}, options: ServeGatewayOptions = {}) {
  const jwks = await jwksServer(async () => [await publicJwk(k1, 'k1')]);
  const manager = McpServerManager.fromConfig(
    { mcpServers: { gh: { ...fixture('reports-credential.mjs'), env: { TOKEN: '${principal:TOKEN}' } } } },
    { credentials: async (principal) => ({ TOKEN: `${principal.id}-credential` }) },
  );
  cleanups.push(() => manager.shutdown());
  const served = await serveGateway(manager, { ...options, transport: 'http', http: { auth: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, ...extra } } });
  cleanups.push(() => served.close());
  return { manager, url: served.url!, jwks };
}

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

/** One stateless 2026 request with `authorization`; the HTTP status, headers and JSON body. */
async function rpc(url: string, authorization: string | undefined, method: string, params: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  });
  const text = await response.text();
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: JSON.parse(text) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } };
}

const whoami = async (url: string, bearer: string) => {
  const answer = await rpc(url, `Bearer ${bearer}`, 'tools/call', { name: 'mcp__gh__whoami', arguments: {} });
  return JSON.parse((answer.body.result?.content as { text: string }[])[0]!.text) as { token: string; pid: number };
};

describe('the gateway as an OAuth 2.1 resource server', () => {
  it('serves each verified principal its own instance, with its credentials from the resolver', async () => {
    const { url } = await gateway();
    const alice = await whoami(url, await token());
    const bob = await whoami(url, await token({}, { sub: 'bob' }));
    expect(alice.token).toBe('alice-credential');
    expect(bob.token).toBe('bob-credential');
    expect(alice.pid).not.toBe(bob.pid);
    expect((await whoami(url, await token())).pid).toBe(alice.pid);
  });

  it('publishes RFC 9728 metadata and refuses a missing or bad token with 401 and WWW-Authenticate', async () => {
    const { url, manager } = await gateway({ scopesSupported: ['tools'] });
    const metadataUrl = new URL('/.well-known/oauth-protected-resource/mcp', url).href;
    const metadata = await (await fetch(metadataUrl)).json();
    expect(metadata).toEqual({ resource: url, authorization_servers: [ISSUER], bearer_methods_supported: ['header'], resource_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA'], scopes_supported: ['tools'] });

    const missing = await rpc(url, undefined, 'server/discover');
    expect(missing.status).toBe(401);
    expect(missing.challenge).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    expect(missing.body.error?.message).toBe('a bearer token is required');

    const good = await token();
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'mallory' })).toString('base64url');
    const cases: [string, string, string][] = [
      ['expired', await token({}, { exp: Math.floor(Date.now() / 1000) - 3600 }), 'the token has expired'],
      ['not yet valid', await token({}, { nbf: Math.floor(Date.now() / 1000) + 3600 }), 'the token is not valid yet (nbf)'],
      ['wrong audience', await token({}, { aud: 'https://other.example.invalid' }), 'the token is for another audience (aud)'],
      ['wrong issuer', await token({}, { iss: 'https://evil.example.invalid' }), 'the token is from another issuer (iss)'],
      ['unknown kid', await token({}, { key: k2, kid: 'k2' }), 'no key of the issuer matches the token (unknown kid)'],
      ['alg none', new UnsecuredJWT({}).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject('alice').setExpirationTime('5m').encode(), 'the token is signed with an algorithm this gateway does not accept'],
      ['tampered', `${header}.${forged}.${signature}`, "the token's signature does not verify"],
      ['not a JWT', 'abc', 'the token is malformed or cannot be verified'],
    ];
    for (const [what, bad, message] of cases) {
      const refused = await rpc(url, `Bearer ${bad}`, 'tools/call', { name: 'mcp__gh__whoami', arguments: {} });
      expect({ what, status: refused.status, message: refused.body.error?.message }).toEqual({ what, status: 401, message });
      expect(refused.challenge).toBe(`Bearer resource_metadata="${metadataUrl}", error="invalid_token", error_description="${message.replace(/"/g, '')}"`);
    }
    expect((await rpc(url, 'Basic YTpi', 'server/discover')).body.error?.message).toBe('the Authorization header must be "Bearer <token>"');
    // None of them reached a server.
    expect(manager.status().gh.instances).toBe(0);
    expect((await rpc(url, `Bearer ${good}`, 'server/discover')).status).toBe(200);
  });

  it('fetches the key set again for an unknown kid, at most once per cooldown', async () => {
    let keys = [await publicJwk(k1, 'k1')];
    const jwks = await jwksServer(async () => keys);
    const manager = McpServerManager.fromConfig({ mcpServers: {} });
    cleanups.push(() => manager.shutdown());
    const served = await serveGateway(manager, { transport: 'http', http: { auth: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, jwksCooldownMs: 3000 } } });
    cleanups.push(() => served.close());
    const url = served.url!;
    expect((await rpc(url, `Bearer ${await token()}`, 'server/discover')).status).toBe(200);
    expect(jwks.state.fetches).toBe(1);
    const rotated = await token({}, { key: k2, kid: 'k2' });
    // A burst of unknown kids costs at most one more fetch per cooldown (3 s; the burst may outlast one on a loaded machine).
    const began = Date.now();
    const burst = await Promise.all(Array.from({ length: 20 }, () => rpc(url, `Bearer ${rotated}`, 'server/discover')));
    expect(burst.every((r) => r.status === 401)).toBe(true);
    expect(jwks.state.fetches).toBeLessThanOrEqual(2 + Math.floor((Date.now() - began) / 3000));
    // The issuer rotates its key in: after the cooldown, the unknown kid is fetched and accepted.
    keys = [await publicJwk(k1, 'k1'), await publicJwk(k2, 'k2')];
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await rpc(url, `Bearer ${rotated}`, 'server/discover')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it('applies policies by scope and claim to the tools listed and called', async () => {
    const { url } = await gateway({}, {
      policies: [
        { tools: { allow: ['mcp__gh__whoami'], deny: ['mcp__gh__leak'] } },
        { when: { scopes: ['gh:write'] }, tools: { allow: ['mcp__gh__*'] } },
        { when: { claims: { groups: 'ops' } }, tools: { allow: ['mcp__gh__slow'] } },
      ],
    });
    const names = async (bearer: string) => ((await rpc(url, `Bearer ${bearer}`, 'tools/list')).body.result?.tools as { name: string }[]).map((t) => t.name).sort();
    expect(await names(await token())).toEqual(['mcp__gh__whoami']);
    expect(await names(await token({ scope: 'gh:read gh:write' }))).toEqual(['mcp__gh__slow', 'mcp__gh__whoami']);
    expect(await names(await token({ groups: ['dev', 'ops'] }))).toEqual(['mcp__gh__slow', 'mcp__gh__whoami']);
    const refused = await rpc(url, `Bearer ${await token()}`, 'tools/call', { name: 'mcp__gh__slow', arguments: { ms: 1 } });
    expect(refused.body.error).toMatchObject({ code: -32602, message: 'tool "mcp__gh__slow" is not available to principal "alice" (the gateway\'s policies leave it out)', data: { code: 'unknown-tool' } });
    expect((await rpc(url, `Bearer ${await token({ scope: 'gh:write' })}`, 'tools/call', { name: 'mcp__gh__slow', arguments: { ms: 1 } })).body.result).toBeDefined();
  });

  it('limits calls per principal and per tool, with a clear error saying when to retry', async () => {
    // Slow refills: the calls' own time (a start on a loaded machine) must not refill a bucket meanwhile.
    const { url } = await gateway({}, { limits: { tool: { capacity: 2, refillPerSecond: 0.05 }, principal: { capacity: 3, refillPerSecond: 0.01 } } });
    const alice = await token();
    const call = (bearer: string, name: string) => rpc(url, `Bearer ${bearer}`, 'tools/call', { name, arguments: { ms: 1 } });
    expect((await call(alice, 'mcp__gh__whoami')).body.result).toBeDefined();
    expect((await call(alice, 'mcp__gh__whoami')).body.result).toBeDefined();
    const perTool = await call(alice, 'mcp__gh__whoami');
    expect(perTool.status).toBe(200);
    expect(perTool.body.error).toMatchObject({ code: -32603, data: { code: 'rate-limited', retryAfterMs: expect.any(Number) } });
    expect(perTool.body.error?.message).toMatch(/^principal "alice" called "mcp__gh__whoami" too often; retry after \d+ ms$/);
    const retry = perTool.body.error?.data?.retryAfterMs as number;
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(20_000);
    // Another tool has its own bucket; the principal's third call overall is its last.
    expect((await call(alice, 'mcp__gh__slow')).body.result).toBeDefined();
    const perPrincipal = await call(alice, 'mcp__gh__slow');
    expect(perPrincipal.body.error?.data).toMatchObject({ code: 'rate-limited' });
    expect(perPrincipal.body.error?.data?.retryAfterMs as number).toBeGreaterThan(20_000);
    expect(perPrincipal.body.error?.data?.retryAfterMs as number).toBeLessThanOrEqual(100_000);
    // Bob is not alice.
    expect((await call(await token({}, { sub: 'bob' }), 'mcp__gh__whoami')).body.result).toBeDefined();
  });

  it('keeps a legacy session to the principal that opened it', async () => {
    const { url } = await gateway();
    const init = async (bearer: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      });
    const opened = await init(await token());
    const session = opened.headers.get('mcp-session-id')!;
    await opened.text();
    expect(session).toBeTruthy();
    const asBob = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${await token({}, { sub: 'bob' })}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(asBob.status).toBe(404);
    await asBob.text();
  });

  it('refuses an auth config that would accept unsigned or shared-secret tokens, or fetch keys in the clear', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: {} });
    cleanups.push(() => manager.shutdown());
    const base = { issuer: ISSUER, audience: AUDIENCE, jwksUrl: 'http://127.0.0.1:1/jwks' };
    await expect(serveGateway(manager, { transport: 'http', http: { auth: { ...base, algorithms: ['none'] } } })).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringContaining('gateway.auth.algorithms may hold only asymmetric algorithms'),
    });
    await expect(serveGateway(manager, { transport: 'http', http: { auth: { ...base, algorithms: ['HS256'] } } })).rejects.toMatchObject({ code: 'invalid-config' });
    await expect(serveGateway(manager, { transport: 'http', http: { auth: { ...base, jwksUrl: 'http://keys.example.invalid/jwks' } } })).rejects.toMatchObject({
      message: 'gateway.auth.jwksUrl must be an https URL (http only on loopback), got "http://keys.example.invalid/jwks"',
    });
  });
});
