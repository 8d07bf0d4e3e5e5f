import { connect } from 'node:net';
import { join } from 'node:path';
import { McpError } from '../../../../src/errors.js';
import { createOAuthProvider, FileTokenStore, loopbackAuthorize, loopbackRedirectUri } from '../../../../src/transport/http/oauth/index.js';
import { tempDir } from '../../../support/temp-dirs.js';
import { callResource, startOAuthFixture } from './oauth-fixture.js';

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('loopbackAuthorize', () => {
  test('a whole login through the loopback listener, the "browser" following the printed URL', async () => {
    const f = await startOAuthFixture();
    try {
      const printed: URL[] = [];
      let browser: Promise<string> | undefined;
      const authorize = loopbackAuthorize({
        open: false,
        timeoutMs: 20_000,
        print: (url) => {
          printed.push(url);
          // The browser follows the authorization server's redirect to the listener.
          browser = fetch(url).then((r) => r.text());
        },
      });
      const provider = createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: new FileTokenStore(join(tempDir(), 'o')), authorize });
      await provider.login();
      expect(printed).toHaveLength(1);
      expect(await browser).toContain('Authorization complete');
      expect((await callResource(provider, f.resource)).status).toBe(200);
      const port = Number(new URL(printed[0].searchParams.get('redirect_uri')!).port);
      expect(await listening(port)).toBe(false);
    } finally {
      await f.close();
    }
  });

  test('no redirect within the time-out: auth-required, and the listener is closed', async () => {
    const redirect = await loopbackRedirectUri();
    const url = new URL('https://as.example.invalid/authorize');
    url.searchParams.set('redirect_uri', redirect);
    let seenListening: boolean | undefined;
    const port = Number(new URL(redirect).port);
    const authorize = loopbackAuthorize({
      open: false,
      timeoutMs: 300,
      print: () => {
        void listening(port).then((up) => (seenListening = up));
      },
    });
    const error = await authorize(url, 'gh').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'auth-required', server: 'gh', phase: 'auth' });
    expect((error as McpError).message).toBe('server "gh": no authorization within 300 ms; run the login again');
    expect(seenListening).toBe(true);
    expect(await listening(port)).toBe(false);
  });

  test('a redirect URI that is not loopback http is refused at once', async () => {
    const url = new URL('https://as.example.invalid/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb');
    const error = await loopbackAuthorize({ open: false, print: () => {} })(url, 'gh').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'auth-required' });
    expect((error as McpError).message).toMatch(/is not a loopback http URI/);
  });

  test('an abort signal cancels the wait', async () => {
    const url = new URL('https://as.example.invalid/authorize');
    url.searchParams.set('redirect_uri', await loopbackRedirectUri());
    const controller = new AbortController();
    const authorize = loopbackAuthorize({ open: false, signal: controller.signal, print: () => controller.abort() });
    const error = await authorize(url, 'gh').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'cancelled', server: 'gh' });
  });
});
