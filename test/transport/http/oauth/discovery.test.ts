import { authorizationServerMetadataUrls, resourceCovers, resourceMetadataUrls } from '../../../../src/transport/http/oauth/discovery.js';
import { parseBearerChallenge } from '../../../../src/transport/http/oauth/bearer-challenge.js';

const hrefs = (urls: URL[]) => urls.map((u) => u.href);

describe('discovery order (MCP authorization spec)', () => {
  test('protected resource metadata: the challenge URL, then path-aware, then root', () => {
    expect(hrefs(resourceMetadataUrls(new URL('https://x.example/public/mcp'), 'https://x.example/prm'))).toEqual([
      'https://x.example/prm',
      'https://x.example/.well-known/oauth-protected-resource/public/mcp',
      'https://x.example/.well-known/oauth-protected-resource',
    ]);
    expect(hrefs(resourceMetadataUrls(new URL('https://x.example/')))).toEqual(['https://x.example/.well-known/oauth-protected-resource']);
  });

  test('authorization server metadata: RFC 8414 and OpenID inserted, then OpenID appended', () => {
    expect(hrefs(authorizationServerMetadataUrls(new URL('https://auth.example/tenant1')))).toEqual([
      'https://auth.example/.well-known/oauth-authorization-server/tenant1',
      'https://auth.example/.well-known/openid-configuration/tenant1',
      'https://auth.example/tenant1/.well-known/openid-configuration',
    ]);
    expect(hrefs(authorizationServerMetadataUrls(new URL('https://auth.example')))).toEqual([
      'https://auth.example/.well-known/oauth-authorization-server',
      'https://auth.example/.well-known/openid-configuration',
    ]);
  });

  test('a resource named by the metadata must be the server URL or a path prefix of it, same origin', () => {
    const server = new URL('https://x.example/api/mcp');
    expect(resourceCovers('https://x.example/api/mcp', server)).toBe(true);
    expect(resourceCovers('https://x.example/', server)).toBe(true);
    expect(resourceCovers('https://x.example/api', server)).toBe(true);
    expect(resourceCovers('https://x.example/ap', server)).toBe(false);
    expect(resourceCovers('https://evil.example/api/mcp', server)).toBe(false);
    expect(resourceCovers('http://x.example/api/mcp', server)).toBe(false);
    expect(resourceCovers('not a url', server)).toBe(false);
  });

  test('Bearer challenges are parsed (quoted and bare values, other schemes ignored)', async () => {
    expect(
      await parseBearerChallenge('Basic realm="x", Bearer error="insufficient_scope", scope="read write", resource_metadata="https://x.example/prm"'),
    ).toEqual({ error: 'insufficient_scope', scope: 'read write', resourceMetadata: 'https://x.example/prm' });
    expect(await parseBearerChallenge('Bearer error=invalid_token')).toEqual({ error: 'invalid_token' });
    expect(await parseBearerChallenge('Basic realm="x"')).toBeUndefined();
    expect(await parseBearerChallenge(null)).toBeUndefined();
  });
});
