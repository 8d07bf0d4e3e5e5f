import { parseConfig, type ServerEntry } from '../../src/manager/config/config.js';

const env = { TEAM: 'blue', TOKEN: 'tok', EMPTY: '' };
const one = (entry: unknown): ServerEntry => parseConfig({ mcpServers: { web: entry } }, env)[0]!;
const message = (entry: unknown) => {
  const parsed = one(entry);
  expect(parsed.kind).toBe('invalid');
  const error = (parsed as { error: Error }).error;
  expect(error).toMatchObject({ code: 'invalid-config', server: 'web', phase: 'config' });
  return error.message;
};

describe('config: remote servers (http, streamable-http, sse)', () => {
  it('reads every field of an http entry, expanding variables in url and headers', () => {
    expect(
      one({
        type: 'http',
        url: 'https://${TEAM}.example.invalid/mcp',
        headers: { 'X-Team': '${TEAM}', Authorization: 'Bearer ${TOKEN}', 'X-Default': '${UNSET:-none}' },
        oauth: { clientId: 'cid', clientSecret: 's', scopes: ['repo', 'read:org'], redirectUri: 'http://127.0.0.1:8765/callback' },
        timeout: 5000,
        idleTimeout: 60000,
        startup: 'eager',
      }),
    ).toEqual({
      name: 'web',
      kind: 'http',
      config: {
        transport: 'http',
        url: 'https://blue.example.invalid/mcp',
        shownUrl: 'https://***.example.invalid/mcp',
        headers: { 'X-Team': 'blue', Authorization: 'Bearer tok', 'X-Default': 'none' },
        oauth: { clientId: 'cid', clientSecret: 's', scopes: ['repo', 'read:org'], redirectUri: 'http://127.0.0.1:8765/callback' },
        timeout: 5000,
        idleTimeout: 60000,
        startup: 'eager',
      },
    });
  });

  it('reads an sse entry with a client metadata document, and a disabled one as disabled', () => {
    expect(one({ type: 'sse', url: 'http://127.0.0.1:9000/sse', oauth: { clientMetadataUrl: 'https://app.example/client.json' } })).toEqual({
      name: 'web',
      kind: 'http',
      config: { transport: 'sse', url: 'http://127.0.0.1:9000/sse', shownUrl: 'http://127.0.0.1:9000/sse', headers: {}, oauth: { clientMetadataUrl: 'https://app.example/client.json' }, startup: 'lazy' },
    });
    expect(one({ type: 'http', url: 'https://example.invalid/mcp', disabled: true })).toMatchObject({ kind: 'disabled', config: { transport: 'http' } });
  });

  it.each([
    [{ type: 'http' }, 'config field "url" is required for an http server'],
    [{ type: 'sse', url: '' }, 'config field "url" is required for an sse server'],
    [{ type: 'http', url: 'ftp://example.invalid/x' }, 'config field "url" must be an http or https URL, got "ftp://example.invalid/x" (string)'],
    [{ type: 'http', url: 'not a url' }, 'config field "url" must be an absolute http or https URL, got "not a url" (string)'],
    [{ type: 'http', url: 42 }, 'config field "url" must be a string, got 42 (number)'],
    [{ type: 'http', url: 'https://${HOST}/mcp' }, 'config field "url" environment variable HOST is not set and has no default'],
    [{ type: 'http', url: 'https://a.invalid', headers: ['x'] }, 'config field "headers" must be an object of strings, got ["x"] (array)'],
    [{ type: 'http', url: 'https://a.invalid', headers: { 'X-N': 3 } }, 'config field "headers.X-N" must be a string, got 3 (number)'],
    [{ type: 'http', url: 'https://a.invalid', headers: { 'bad name': 'v' } }, 'config field "headers.bad name" is not a valid HTTP header name'],
    [{ type: 'http', url: 'https://a.invalid', headers: { 'X-A': '${NOPE}' } }, 'config field "headers.X-A" environment variable NOPE is not set and has no default'],
    [{ type: 'http', url: 'https://a.invalid', headers: { 'X-A': 'a\r\nX-B: b' } }, 'config field "headers.X-A" must not contain line breaks or NUL'],
    [{ type: 'http', url: 'https://a.invalid', oauth: 'yes' }, 'config field "oauth" must be an object, got "yes" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { clientID: 'x' } }, 'config field "oauth.clientID" is not an oauth field (clientId, clientSecret, clientMetadataUrl, scopes, redirectUri, grant, privateKey, signingAlgorithm)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { grant: 'password' } }, 'config field "oauth.grant" must be "authorization_code" or "client_credentials", got "password" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { grant: 'client_credentials', clientId: 'svc' } }, 'config field "oauth.grant" is "client_credentials", which needs oauth.clientId and oauth.clientSecret or oauth.privateKey'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { clientId: 'svc', signingAlgorithm: 'ES256' } }, 'config field "oauth.signingAlgorithm" needs oauth.privateKey'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { clientId: '' } }, 'config field "oauth.clientId" must be a non-empty string, got "" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { clientSecret: 's' } }, 'config field "oauth.clientSecret" needs oauth.clientId'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { clientMetadataUrl: 'http://app.example/c.json' } }, 'config field "oauth.clientMetadataUrl" must be an https URL, got "http://app.example/c.json" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { scopes: 'repo' } }, 'config field "oauth.scopes" must be an array of strings, got "repo" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { scopes: ['a b'] } }, 'config field "oauth.scopes[0]" must be one scope without spaces, got "a b" (string)'],
    [{ type: 'http', url: 'https://a.invalid', oauth: { redirectUri: 'myapp:/cb' } }, 'config field "oauth.redirectUri" must be an http or https URL, got "myapp:/cb" (string)'],
    [{ type: 'http', url: 'https://a.invalid', timeout: -1 }, 'config field "timeout" must be a positive number of milliseconds, got -1 (number)'],
    [{ type: 'http', url: 'https://a.invalid', startup: 'now' }, 'config field "startup" must be "lazy" or "eager", got "now" (string)'],
  ])('marks a bad remote entry invalid, naming the field and value: %j', (entry, expected) => {
    expect(message(entry)).toBe(`server "web": ${expected}`);
  });

  it('leaves stdio parsing as it was', () => {
    expect(one({ command: 'node', args: ['s.js'] })).toMatchObject({ kind: 'stdio', config: { command: 'node', args: ['s.js'] } });
  });
});
