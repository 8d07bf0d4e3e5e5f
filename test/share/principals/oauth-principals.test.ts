import { McpServerManager } from '../../../src/manager/manager.js';
import { textOf } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import type { OAuthFixture } from '../../transport/http/oauth/oauth-fixture.js';
import { browse, MemoryStore, oauthFixtureEach } from '../../support/oauth-pool.js';

describe('OAuth per principal', () => {
  let f: OAuthFixture;
  const managers = oauthFixtureEach({ mcp: true, challengeScope: 'read write' }, (fixture) => (f = fixture));

  it('keeps each principal\'s tokens apart: a login for alice authorizes alice only, and bob is told how to log in', async () => {
    const tokenStore = new MemoryStore();
    const manager = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {}, perPrincipal: true } } }, { stateDir: tempDir(), tokenStore });
    managers.push(manager);
    const alice = manager.session({ principal: { id: 'alice' } });
    const bob = manager.session({ principal: { id: 'bob' } });
    await expect(alice.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required', server: 'gh' });
    await manager.login('gh', { principal: { id: 'alice' }, openUrl: browse, timeoutMs: 20_000 });
    expect(textOf(await alice.callServerTool('gh', 'whoami'))).toBe('read write');
    // The token is alice's: stored under her key only, never under the server's shared one.
    const keys = [...tokenStore.records.keys()];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^principal:[A-Za-z0-9_-]{32} gh http:\/\/127\.0\.0\.1:\d+\//);
    expect(keys[0]).not.toContain('alice');
    const refused = await bob.callServerTool('gh', 'whoami').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'auth-required', server: 'gh', message: expect.stringContaining('(principal "bob": send the user to http://127.0.0.1:'), authorizationUrl: expect.stringContaining('/authorize?') });
    await expect(manager.callServerTool('gh', 'whoami')).rejects.toMatchObject({ code: 'auth-required' });
    await expect(manager.login('gh', { principal: { id: 'x' }, openUrl: browse })).resolves.toBeUndefined();
  });

  it('refuses a principal login for a server that is not run per principal', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {} } } }, { stateDir: tempDir(), tokenStore: new MemoryStore() });
    managers.push(manager);
    await expect(manager.login('gh', { principal: { id: 'alice' }, openUrl: browse })).rejects.toMatchObject({
      code: 'invalid-arguments',
      message: expect.stringContaining("login's principal applies to a server run per principal"),
    });
  });
});
