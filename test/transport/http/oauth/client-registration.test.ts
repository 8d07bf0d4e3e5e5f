import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as oauth from 'oauth4webapi';
import { applicationType, resolveClient } from '../../../../src/transport/http/oauth/client-registration.js';

/** A registration endpoint on 127.0.0.1 that records each request body and registers the client. */
async function registrationEndpoint(): Promise<{ as: oauth.AuthorizationServer; bodies: Record<string, unknown>[]; close(): Promise<void> }> {
  const bodies: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      bodies.push(body);
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...body, client_id: `client-${bodies.length}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    as: { issuer: base, registration_endpoint: `${base}/register`, code_challenge_methods_supported: ['S256'] },
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const http = { server: 'gh', fetch, timeoutMs: 5000 };

describe('dynamic client registration (SEP-837)', () => {
  test('sends application_type "native" for a loopback redirect and "web" for a remote https one', async () => {
    const endpoint = await registrationEndpoint();
    try {
      const native = await resolveClient(http, endpoint.as, {}, undefined, 'http://127.0.0.1:33418/callback', 'lazy-mcp');
      const web = await resolveClient(http, endpoint.as, {}, undefined, 'https://app.example.com/oauth/callback', 'lazy-mcp');
      expect(endpoint.bodies.map((b) => [b.application_type, b.redirect_uris])).toEqual([
        ['native', ['http://127.0.0.1:33418/callback']],
        ['web', ['https://app.example.com/oauth/callback']],
      ]);
      expect([native.clientId, web.clientId]).toEqual(['client-1', 'client-2']);
    } finally {
      await endpoint.close();
    }
  });

  test.each([
    ['http://127.0.0.1:8080/callback', 'native'],
    ['http://localhost/cb', 'native'],
    ['http://[::1]:9000/cb', 'native'],
    ['com.example.app:/oauth2redirect', 'native'],
    ['https://app.example.com/callback', 'web'],
    ['http://intranet.example/callback', 'web'],
    ['https://127.0.0.1.example.com/callback', 'web'],
  ])('%s is %s', (uri, type) => {
    expect(applicationType(uri)).toBe(type);
  });
});
