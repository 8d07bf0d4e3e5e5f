import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { McpError } from '../../../../src/errors.js';
import { createOAuthProvider, FileTokenStore, type OAuthConfig } from '../../../../src/transport/http/oauth/index.js';
import { signingKeyProblem } from '../../../../src/transport/http/oauth/signing-key.js';
import { tempDir } from '../../../support/temp-dirs.js';
import { callResource, startOAuthFixture, type LoggedRequest, type OAuthFixture } from './oauth-fixture.js';

const fixtures: OAuthFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

async function fixture(options: Record<string, unknown>): Promise<OAuthFixture> {
  const f = await startOAuthFixture(options);
  fixtures.push(f);
  return f;
}

/** A machine client: no `authorize` callback at all, so any interactive step would fail the test. */
function machine(f: OAuthFixture, config: OAuthConfig) {
  const store = new FileTokenStore(join(tempDir(), 'oauth'));
  return createOAuthProvider({ server: 'm2m', resourceUrl: f.resource, tokenStore: store, config: { grant: 'client_credentials', ...config } });
}

const tokenRequests = async (f: OAuthFixture) => (await f.log()).filter((r: LoggedRequest) => r.path === '/token').map((r) => ({ form: new URLSearchParams(r.body), authorization: r.authorization }));

const es256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });

describe('the client credentials grant (machine-to-machine, SEP-1046)', () => {
  test('a 401 gets a token with client_secret_basic, with the resource and the challenged scope, and the request goes again', async () => {
    const f = await fixture({ clients: [{ client_id: 'svc', client_secret: 's3cret', method: 'client_secret_basic' }], dcr: false });
    const provider = machine(f, { clientId: 'svc', clientSecret: 's3cret' });
    const response = await callResource(provider, f.resource);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: { scope: 'read' } });
    const [request, ...more] = await tokenRequests(f);
    expect(more).toHaveLength(0);
    expect(request?.form.get('grant_type')).toBe('client_credentials');
    expect(request?.form.get('resource')).toBe(f.resource.href);
    expect(request?.form.get('scope')).toBe('read');
    expect(request?.authorization).toBe(`Basic ${Buffer.from('svc:s3cret').toString('base64')}`);
    // No authorization endpoint and no registration: there is no user.
    expect((await f.log()).some((r) => r.path === '/authorize' || r.path === '/register')).toBe(false);
  });

  test('private_key_jwt: the token request carries an ES256 assertion the server verifies with the public key', async () => {
    const { publicKey, privateKey } = es256();
    const f = await fixture({ clients: [{ client_id: 'signer', method: 'private_key_jwt', public_key_pem: publicKey }], dcr: false });
    const provider = machine(f, { clientId: 'signer', privateKey, signingAlgorithm: 'ES256' });
    await provider.login();
    const response = await callResource(provider, f.resource);
    expect(response.status).toBe(200);
    const [request] = await tokenRequests(f);
    expect(request?.form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(request?.form.get('client_id')).toBe('signer');
    expect(request?.authorization).toBeUndefined();
  });

  test('an expiring token is replaced by a new grant before it is sent; a 401 for a fresh token is auth-required, not a loop', async () => {
    const f = await fixture({ clients: [{ client_id: 'svc', client_secret: 'x', method: 'client_secret_post' }], authMethods: ['client_secret_post'], dcr: false, accessTtl: 5 });
    const provider = machine(f, { clientId: 'svc', clientSecret: 'x' });
    await provider.login();
    expect((await callResource(provider, f.resource)).status).toBe(200);
    expect((await tokenRequests(f)).map((t) => [t.form.get('grant_type'), t.form.get('client_secret')])).toEqual([
      ['client_credentials', 'x'],
      ['client_credentials', 'x'],
    ]);
    const error = await provider
      .unauthorized({ status: 401, wwwAuthenticate: 'Bearer error="invalid_token"', resourceUrl: f.resource, authorization: await provider.authorization() })
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'auth-required', message: expect.stringContaining('refused the token its client credentials grant just gave') });
  });

  test('wrong credentials are auth-required naming the token endpoint answer', async () => {
    const f = await fixture({ clients: [{ client_id: 'svc', client_secret: 'right', method: 'client_secret_basic' }], dcr: false });
    const provider = machine(f, { clientId: 'svc', clientSecret: 'wrong' });
    const error = await provider.login().then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'auth-required', message: expect.stringContaining('invalid_client') });
  });

  test('a key or algorithm that cannot sign is named when the config is read', () => {
    const { privateKey } = es256();
    expect(signingKeyProblem(privateKey, undefined)).toBeUndefined();
    expect(signingKeyProblem(privateKey, 'HS256')).toMatch(/^signingAlgorithm must be one of ES256, .* got "HS256"$/);
    expect(signingKeyProblem('not a key', undefined)).toMatch(/^privateKey is not a usable PEM private key/);
    expect(signingKeyProblem(es256().publicKey, undefined)).toMatch(/^privateKey /);
  });
});
