import { McpServerManager } from '../../../src/manager/manager.js';
import { McpError } from '../../../src/errors.js';
import { toRpcError } from '../../../src/protocol/rpc-errors.js';
import { textOf } from '../../support/fixtures.js';
import { MemoryStore } from '../../support/oauth-pool.js';
import { tempDir } from '../../support/temp-dirs.js';
import { startOAuthFixture, type OAuthFixture } from '../../transport/http/oauth/oauth-fixture.js';

/** The user at the authorization server: follows the URL, which approves at once and redirects; the redirect is returned, not followed. */
async function approve(url: string): Promise<URL> {
  const answer = await fetch(url, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location')!);
}

async function refusal(work: Promise<unknown>): Promise<McpError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

/** A call of `session` until it works (the code is exchanged after the redirect is answered), bounded. */
async function untilWorks(call: () => Promise<{ content: unknown[] }>, ms = 10_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return textOf(await call());
    } catch (error) {
      if (Date.now() > deadline || !(error instanceof McpError) || error.code !== 'auth-required') throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

describe('auth-required with the URL to send a principal\'s user to', () => {
  let f: OAuthFixture;
  const managers: McpServerManager[] = [];
  beforeEach(async () => {
    f = await startOAuthFixture({ mcp: true, challengeScope: 'read write' });
  });
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
    await f.close();
  });

  function make(oauth: Record<string, unknown> = {}) {
    const tokenStore = new MemoryStore();
    const manager = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth, perPrincipal: true } } }, { stateDir: tempDir(), tokenStore });
    managers.push(manager);
    const logs: unknown[] = [];
    manager.on('log', (entry) => logs.push(entry));
    return { manager, tokenStore, logs };
  }

  it('hands out a PKCE authorization URL whose loopback redirect stores the token for that principal and server only', async () => {
    const { manager, tokenStore, logs } = make();
    const alice = manager.session({ principal: { id: 'alice' } });
    const bob = manager.session({ principal: { id: 'bob' } });

    const refused = await refusal(alice.callServerTool('gh', 'whoami'));
    expect(refused).toMatchObject({ code: 'auth-required', server: 'gh' });
    const url = new URL(refused.authorizationUrl!);
    expect(refused.message).toContain(`(principal "alice": send the user to ${url.href})`);
    // The URL names the client this manager registered, the loopback redirect, PKCE, state and the resource.
    const registered = [...tokenStore.records.values()][0]!;
    expect(url.origin + url.pathname).toBe(`${f.url}/authorize`);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe(registered.client.clientId);
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(url.searchParams.get('resource')).toBe(f.resource.href);
    expect(url.searchParams.get('scope')).toBe('read write');
    // Asked again while the user has not come back: the same authorization in wait.
    expect((await refusal(alice.callServerTool('gh', 'whoami'))).authorizationUrl).toBe(url.href);
    // Over a gateway it travels in the JSON-RPC error's data.
    expect((toRpcError(refused).rpc?.data as { authorizationUrl?: string }).authorizationUrl).toBe(url.href);

    const bobs = await refusal(bob.callServerTool('gh', 'whoami'));
    const bobUrl = new URL(bobs.authorizationUrl!);
    expect(bobUrl.searchParams.get('state')).not.toBe(url.searchParams.get('state'));

    // The user follows alice's URL; the browser lands on the loopback callback.
    const redirect = await approve(url.href);
    expect(redirect.searchParams.get('code')).toBeTruthy();
    expect(redirect.searchParams.get('state')).toBe(url.searchParams.get('state'));
    const page = await fetch(redirect);
    expect(page.status).toBe(200);
    await page.text();

    expect(await untilWorks(() => alice.callServerTool('gh', 'whoami'))).toBe('read write');
    // Bob's authorization is still his to complete: his calls are refused, with his URL.
    const still = await refusal(bob.callServerTool('gh', 'whoami'));
    expect(still).toMatchObject({ code: 'auth-required', authorizationUrl: bobUrl.href });
    // Alice's token is kept under her key only; the manager's own (no principal) holds none.
    const withTokens = [...tokenStore.records.entries()].filter(([, r]) => r.tokens !== undefined);
    expect(withTokens).toHaveLength(1);
    expect(withTokens[0]![0]).toMatch(/^principal:[A-Za-z0-9_-]{32} gh /);
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });

    // No token in what a caller or a watcher sees.
    const token = withTokens[0]![1].tokens!.accessToken;
    const seen = JSON.stringify([still.message, still.authorizationUrl, manager.status(), manager.metrics(), logs, String(still.cause)]);
    expect(seen).not.toContain(token);
  });

  it('completes a redirect the host received on its own redirect URI through completeLogin, once', async () => {
    const { manager } = make({ redirectUri: 'https://app.example.test/oauth/callback' });
    const carol = manager.session({ principal: { id: 'carol' } });
    const dave = manager.session({ principal: { id: 'dave' } });
    const refused = await refusal(carol.callServerTool('gh', 'whoami'));
    const url = new URL(refused.authorizationUrl!);
    expect(url.searchParams.get('redirect_uri')).toBe('https://app.example.test/oauth/callback');
    const redirect = await approve(url.href);
    expect(redirect.origin).toBe('https://app.example.test');

    await expect(manager.completeLogin('not a url')).rejects.toMatchObject({ code: 'invalid-arguments', message: expect.stringContaining('completeLogin\'s redirect must be a URL, got "not a url"') });
    const forged = new URL(redirect);
    forged.searchParams.set('state', 'forged-state');
    await expect(manager.completeLogin(forged)).rejects.toMatchObject({ code: 'invalid-arguments', message: expect.stringContaining('"forged-state"') });

    await manager.completeLogin(redirect.href);
    expect(textOf(await carol.callServerTool('gh', 'whoami'))).toBe('read write');
    await expect(dave.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required', authorizationUrl: expect.stringContaining('/authorize?') });
    // The state is spent: the same redirect twice is refused.
    await expect(manager.completeLogin(redirect)).rejects.toMatchObject({ code: 'invalid-arguments' });
  });

  it('a refused authorization (the user denied it) is given up, and the next call hands out a fresh URL', async () => {
    const { manager } = make({ redirectUri: 'https://app.example.test/cb' });
    const erin = manager.session({ principal: { id: 'erin' } });
    const first = new URL((await refusal(erin.callServerTool('gh', 'whoami'))).authorizationUrl!);
    const denied = new URL('https://app.example.test/cb');
    denied.searchParams.set('state', first.searchParams.get('state')!);
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('iss', f.url);
    await expect(manager.completeLogin(denied)).rejects.toMatchObject({ code: 'auth-required', server: 'gh' });
    const second = new URL((await refusal(erin.callServerTool('gh', 'whoami'))).authorizationUrl!);
    expect(second.searchParams.get('state')).not.toBe(first.searchParams.get('state'));
  });
});
