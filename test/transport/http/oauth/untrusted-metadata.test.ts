import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { McpError } from '../../../../src/errors.js';
import { createOAuthProvider, FileTokenStore, loopbackAuthorize, type Authorize } from '../../../../src/transport/http/oauth/index.js';
import { forbiddenAddress, forbiddenHost, guardedFetch } from '../../../../src/transport/http/oauth/url-guard.js';
import { tempDir } from '../../../support/temp-dirs.js';
import { followAuthorization, startOAuthFixture, type OAuthFixture } from './oauth-fixture.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function fixture(options: Record<string, unknown> = {}): Promise<OAuthFixture> {
  const f = await startOAuthFixture(options);
  cleanups.push(() => f.close());
  return f;
}

/** "Another host": a loopback server on its own port that records every request and answers metadata an attacker would like used. */
async function otherHost(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ resource: 'x', authorization_servers: ['http://127.0.0.1:1'] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function provider(f: OAuthFixture) {
  const calls: URL[] = [];
  const authorize: Authorize = async (url) => {
    calls.push(url);
    return followAuthorization(url);
  };
  return { calls, provider: createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: new FileTokenStore(join(tempDir(), 'oauth')), authorize, timeoutMs: 5000 }) };
}

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('authorization server endpoints must be https, http only on loopback (item 2)', () => {
  it.each([
    ['file:///etc/passwd', 'its scheme is file:, not https'],
    ['javascript:alert(document.cookie)', 'its scheme is javascript:, not https'],
    ['data:text/html,<script>alert(1)</script>', 'its scheme is data:, not https'],
    ['http://as.example/authorize', 'it is not https (plain http is allowed on loopback only)'],
  ])('an authorization_endpoint %s is refused before any browser step', async (endpoint, why) => {
    const f = await fixture({ authorizationEndpoint: endpoint });
    const { provider: p, calls } = provider(f);
    const error = await rejection(p.login());
    expect(error.code).toBe('auth-required');
    expect(error.message).toContain(`refusing the authorization_endpoint of ${f.url} `);
    expect(error.message).toContain(`: ${why}; OAuth endpoints must be https`);
    expect(calls).toEqual([]);
  });

  it('a UNC path is no URL at all, and is refused too', async () => {
    const f = await fixture({ authorizationEndpoint: '\\\\attacker.example\\share\\x.exe' });
    const { provider: p, calls } = provider(f);
    const error = await rejection(p.login());
    expect(error.code).toBe('auth-required');
    expect(error.message).toMatch(/names a authorization_endpoint that is not a URL/);
    expect(calls).toEqual([]);
  });

  it('loopbackAuthorize, given such a URL by a host, neither shows nor opens it', async () => {
    const shown: URL[] = [];
    const error = await rejection(loopbackAuthorize({ open: true, print: (url) => shown.push(url) })(new URL('file:///etc/passwd?redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb'), 'gh'));
    expect(error.code).toBe('auth-required');
    expect(error.message).toBe('server "gh": refusing the authorization URL "file:///etc/passwd": its scheme is file:, not https');
    expect(shown).toEqual([]);
  });
});

describe('no SSRF during login (item 3)', () => {
  it('a resource_metadata URL on another host is not fetched; the server\'s own well-known metadata is used', async () => {
    const other = await otherHost();
    const f = await fixture({ resourceMetadata: `${other.url}/latest/meta-data/iam/security-credentials/admin` });
    const { provider: p, calls } = provider(f);
    await p.login();
    expect(other.seen).toEqual([]);
    expect(calls).toHaveLength(1);
    expect((await f.log()).map((r) => r.path)).toContain('/.well-known/oauth-protected-resource/mcp');
  });

  it('a cross-origin resource_metadata with no metadata at the server\'s own origin fails clearly; a same-origin redirect is followed', async () => {
    const other = await otherHost();
    // The path-aware well-known URL redirects within its origin, to nothing; the root one has nothing either.
    const f = await fixture({ resourceMetadata: `${other.url}/prm`, prmRedirect: '/nothing-here' });
    const { provider: p, calls } = provider(f);
    const error = await rejection(p.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toBe(
      `server "gh": the server names its protected resource metadata at another origin ("${other.url}/prm"); only ${f.url} may publish it, and there is none there (tried ${f.url}/.well-known/oauth-protected-resource/mcp, ${f.url}/.well-known/oauth-protected-resource)`,
    );
    expect((await f.log()).map((r) => r.path)).toContain('/nothing-here');
    expect(other.seen).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('a redirect of the well-known metadata request to another host is not followed', async () => {
    const other = await otherHost();
    const f = await fixture({ prmRedirect: `${other.url}/latest/meta-data/iam/security-credentials/admin` });
    const { provider: p, calls } = provider(f);
    const error = await rejection(p.login());
    expect(error.code).toBe('protocol-error');
    expect(error.message).toBe(
      `server "gh": the protected resource metadata at "${f.url}/.well-known/oauth-protected-resource/mcp" redirects to another origin ("${other.url}/latest/meta-data/iam/security-credentials/admin"); refusing to follow it`,
    );
    expect(other.seen).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('link-local and metadata-service addresses are refused before anything is sent', async () => {
    for (const url of ['https://169.254.169.254/latest/meta-data/', 'https://[::ffff:169.254.169.254]/', 'https://[fe80::1]/', 'https://metadata.google.internal/computeMetadata/v1/', 'https://100.100.100.200/latest/meta-data/', 'https://2852039166/']) {
      let sent = false;
      const guarded = guardedFetch('gh', async () => {
        sent = true;
        return new Response('{}');
      });
      const error = await rejection(guarded(url));
      expect([url, error.code, error.message]).toEqual([url, 'protocol-error', expect.stringMatching(/^server "gh": refusing an OAuth request to "https:\/\/.*": a (link-local address|cloud metadata service)/)]);
      expect(sent).toBe(false);
    }
    expect(forbiddenAddress('169.254.0.1')).toMatch(/link-local/);
    expect(forbiddenAddress('::ffff:a9fe:a9fe')).toMatch(/link-local/);
    expect(forbiddenAddress('fd00:ec2::254')).toMatch(/metadata/);
    expect(forbiddenAddress('127.0.0.1')).toBeUndefined();
    expect(forbiddenAddress('93.184.216.34')).toBeUndefined();
    expect(await forbiddenHost(new URL('http://localhost:8080/'))).toBeUndefined();
  });

  it('the guard also refuses any OAuth request that is not https beyond loopback, and never follows a redirect itself', async () => {
    const other = await otherHost();
    let redirect: RequestInit['redirect'];
    const guarded = guardedFetch('gh', async (_input, init) => {
      redirect = init?.redirect;
      return new Response('{}');
    });
    await guarded(`${other.url}/token`, { method: 'POST' });
    expect(redirect).toBe('manual');
    const error = await rejection(guarded('http://as.example/token'));
    expect(error.message).toBe('server "gh": refusing an OAuth request to "http://as.example/token": it is not https (plain http is allowed on loopback only)');
  });
});
