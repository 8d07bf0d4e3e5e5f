import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../src/manager/manager.js';
import type { ManagerEvents } from '../../src/manager/manager.js';
import { tempDir } from '../support/temp-dirs.js';
import { textOf } from '../support/fixtures.js';
import { followAuthorization, type OAuthFixture } from '../transport/http/oauth/oauth-fixture.js';
import { browse, oauthFixtureEach } from '../support/oauth-pool.js';

describe('OAuth in the pool (local authorization server + MCP resource on 127.0.0.1)', () => {
  let f: OAuthFixture;
  const managers = oauthFixtureEach({ mcp: true, challengeScope: 'read write' }, (fixture) => (f = fixture));
  const pool = (stateDir: string, extra: Record<string, unknown> = {}) => {
    const m = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {}, ...extra } } }, { stateDir });
    managers.push(m);
    return m;
  };

  it('without a token the server is needs-auth and calls reject auth-required naming the login; nothing interactive runs', async () => {
    const manager = pool(tempDir());
    const error = await manager.callServerTool('gh', 'whoami').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'auth-required', server: 'gh' });
    expect((error as Error).message).toContain('lazy-mcp login gh');
    expect(manager.status().gh).toMatchObject({ state: 'needs-auth', transport: 'http', lastError: expect.objectContaining({ code: 'auth-required' }) });
    // Listings leave it out; a second call fails fast, without asking the server again.
    expect(await manager.listTools()).toEqual([]);
    const seen = (await f.log()).length;
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });
    const log = await f.log();
    expect(log).toHaveLength(seen);
    expect(log.some((r) => r.path === '/authorize' || r.path === '/register')).toBe(false);
  });

  it('login runs the loopback authorization, stores the tokens 0600, and the server then works', async () => {
    const stateDir = tempDir();
    const manager = pool(stateDir);
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });
    const shown: URL[] = [];
    await manager.login('gh', { openUrl: (url) => (shown.push(url), browse(url)), timeoutMs: 20_000 });
    expect(shown).toHaveLength(1);
    expect(shown[0].searchParams.get('code_challenge_method')).toBe('S256');
    expect(manager.status().gh.state).toBe('stopped');
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    expect(manager.status().gh).toMatchObject({ state: 'ready', era: 'legacy' });
    const dir = join(stateDir, 'oauth');
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, files[0])).mode & 0o777).toBe(0o600);
    // Another manager on the same state folder (the next run of the app) needs no login.
    const next = pool(stateDir);
    expect((await next.listTools()).map((t) => t.name)).toEqual(['mcp__gh__whoami']);
  });

  it('an expired access token is refreshed without the user; a refused refresh makes the server needs-auth again, until the next login', async () => {
    const stateDir = tempDir();
    const manager = pool(stateDir);
    const states: string[] = [];
    manager.on('stateChange', (e: ManagerEvents['stateChange']) => states.push(e.to));
    await manager.login('gh', { openUrl: browse, timeoutMs: 20_000 });
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');

    await fetch(`${f.url}/_expire`);
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    expect((await f.log()).filter((r) => r.path === '/token' && r.body.includes('grant_type=refresh_token'))).toHaveLength(1);
    expect(manager.status().gh.state).toBe('ready');

    // Revoke the refresh token at the authorization server, then expire the access token.
    const [file] = readdirSync(join(stateDir, 'oauth'));
    const stored = JSON.parse(readFileSync(join(stateDir, 'oauth', file), 'utf8')) as { tokens: { refreshToken: string } };
    await fetch(`${f.url}/revoke`, { method: 'POST', body: new URLSearchParams({ token: stored.tokens.refreshToken }) });
    await fetch(`${f.url}/_expire`);
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });
    expect(manager.status().gh.state).toBe('needs-auth');
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });

    await manager.login('gh', { openUrl: browse, timeoutMs: 20_000 });
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    expect(states).toEqual(['starting', 'ready', 'needs-auth', 'stopped', 'starting', 'ready']);
  });

  it('a token endpoint outage during a refresh fails that call only, naming the token endpoint; the connection stays up', async () => {
    const manager = pool(tempDir());
    const states: string[] = [];
    manager.on('stateChange', (e: ManagerEvents['stateChange']) => states.push(e.to));
    await manager.login('gh', { openUrl: browse, timeoutMs: 20_000 });
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    await fetch(`${f.url}/_token_outage?on=1`);
    await fetch(`${f.url}/_expire`);
    const error = await manager.callServerTool('gh', 'whoami').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connect-failed', server: 'gh' });
    expect((error as Error).message).toContain(`the token endpoint at ${f.url}/token`);
    expect(manager.status().gh.state).toBe('ready');
    // Once the authorization server is back, the same connection serves: no new start.
    await fetch(`${f.url}/_token_outage?on=0`);
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    expect(states).toEqual(['starting', 'ready']);
    expect(manager.status().gh).toMatchObject({ state: 'ready', restarts: 0 });
  });

  it('login of a server without oauth (or not remote) says so', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { plain: { type: 'http', url: f.resource.href } } }, { stateDir: tempDir() });
    managers.push(manager);
    await expect(manager.login('plain')).rejects.toMatchObject({ code: 'invalid-arguments', message: expect.stringContaining('"oauth"') });
    await expect(manager.login('nope')).rejects.toMatchObject({ code: 'unknown-server' });
  });
});

describe('OAuth step-up in the pool (403 insufficient_scope)', () => {
  let f: OAuthFixture;
  // Tokens carry only "read"; tools/call needs "write" too.
  const managers = oauthFixtureEach({ mcp: true, challengeScope: 'read' }, (fixture) => (f = fixture));

  it('without an authorize option, the call rejects auth-required naming the scope; the server stays ready for the rest', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {} } } }, { stateDir: tempDir() });
    managers.push(manager);
    await manager.login('gh', { openUrl: browse, timeoutMs: 20_000 });
    expect((await manager.listTools()).map((t) => t.name)).toEqual(['mcp__gh__whoami']);
    const error = await manager.callServerTool('gh', 'whoami').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'auth-required' });
    expect((error as Error).message).toContain('write');
    expect(manager.status().gh.state).toBe('ready');
    expect((await f.log()).filter((r) => r.path === '/authorize')).toHaveLength(1);
  });

  it("with the manager's authorize, login uses it and a step-up runs it once more and retries the call", async () => {
    const shown: URL[] = [];
    const authorize = (url: URL) => (shown.push(url), followAuthorization(url));
    const manager = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {} } } }, { stateDir: tempDir(), authorize });
    managers.push(manager);
    await manager.login('gh');
    expect(shown.map((u) => u.searchParams.get('scope'))).toEqual(['read']);
    expect(textOf(await manager.callServerTool('gh', 'whoami'))).toBe('read write');
    expect(shown.map((u) => u.searchParams.get('scope'))).toEqual(['read', 'read write']);
  });
});
