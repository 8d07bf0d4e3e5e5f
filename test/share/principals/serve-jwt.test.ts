import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { serveEach } from '../../cli/run-cli.js';
import { fixture } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

const ISSUER = 'https://issuer.example.invalid';
const AUDIENCE = 'lazy-mcp-test';
const serve = serveEach();
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function setup() {
  const pair = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => (server.close(resolve), server.closeAllConnections())));
  const jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  const dir = tempDir();
  const secrets = join(dir, 'secrets');
  mkdirSync(secrets, { mode: 0o700 });
  writeFileSync(join(secrets, 'alice.json'), JSON.stringify({ TOKEN: 'alice-from-the-secrets-folder' }), { mode: 0o600 });
  const config = join(dir, 'mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { gh: { ...fixture('reports-credential.mjs'), env: { TOKEN: '${principal:TOKEN}' } } },
      gateway: { auth: { type: 'jwt', issuer: ISSUER, audience: AUDIENCE, jwksUrl }, policies: [{ tools: { deny: ['mcp__gh__leak'] } }] },
    }),
  );
  const token = (sub: string) => new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(sub).setExpirationTime('5m').sign(pair.privateKey);
  return { config, secrets, token };
}

const call = (url: string, bearer: string | undefined, name: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2026-07-28', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });

describe('lazy-mcp serve --http --auth jwt', () => {
  it('verifies tokens, gives each principal its credentials from the secrets folder, and applies the config\'s policies', async () => {
    const { config, secrets, token } = await setup();
    const { url } = await serve(['--http', '--port', '0', '--auth', 'jwt', '--secrets', secrets, '--config', config]);
    expect(url).toBeDefined();
    const refused = await call(url!, undefined, 'mcp__gh__whoami');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/mcp', url).href}"`);
    const answer = (await (await call(url!, await token('alice'), 'mcp__gh__whoami')).json()) as { result: { content: { text: string }[] } };
    expect(JSON.parse(answer.result.content[0]!.text).token).toBe('alice-from-the-secrets-folder');
    const denied = (await (await call(url!, await token('alice'), 'mcp__gh__leak')).json()) as { error: { data: { code: string } } };
    expect(denied.error.data.code).toBe('unknown-tool');
    // Bob has no secrets: his call names what is missing, and no value.
    const bob = (await (await call(url!, await token('bob'), 'mcp__gh__whoami')).json()) as { error: { message: string; data: { code: string } } };
    expect(bob.error).toMatchObject({ data: { code: 'auth-required' }, message: expect.stringContaining('principal "bob" has no credential TOKEN') });
  });

  it('refuses secrets others may read, and JWT flags without --auth jwt, with exit 2', async () => {
    const { config, secrets } = await setup();
    chmodSync(secrets, 0o755);
    const open = await serve(['--http', '--port', '0', '--auth', 'jwt', '--secrets', secrets, '--config', config]);
    expect(open.exit).toBe(2);
    expect(open.stderr()).toContain(`secrets ${secrets} may be read or written by others (mode 0755); chmod it 0700`);
    const loose = join(tempDir(), 'mcp.json');
    writeFileSync(loose, JSON.stringify({ mcpServers: {} }));
    const noAuth = await serve(['--http', '--port', '0', '--issuer', ISSUER, '--config', loose]);
    expect(noAuth.exit).toBe(2);
    expect(noAuth.stderr()).toContain('--issuer, --audience, --jwks-url and --jwt-alg need --auth jwt');
  });
});
