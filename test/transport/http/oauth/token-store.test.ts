import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOAuthProvider, FileTokenStore, tokenStoreKey, type OAuthRecord } from '../../../../src/transport/http/oauth/index.js';
import { tempDir } from '../../../support/temp-dirs.js';
import { followAuthorization, startOAuthFixture } from './oauth-fixture.js';

const record = (accessToken: string): OAuthRecord => ({
  version: 1,
  server: 'gh',
  resource: 'https://example.invalid/mcp',
  issuer: 'https://as.example.invalid',
  client: { kind: 'dynamic', clientId: 'c1', authMethod: 'none' },
  tokens: { accessToken, tokenType: 'bearer', refreshToken: 'r1', expiresAt: 1 },
});

const mode = (path: string) => statSync(path).mode & 0o777;

describe('FileTokenStore', () => {
  test('one file per key, 0600 in a 0700 folder, readable back; delete removes it', async () => {
    const dir = join(tempDir(), 'state', 'oauth');
    const store = new FileTokenStore(dir);
    const key = tokenStoreKey('gh', new URL('https://example.invalid/mcp'));
    expect(await store.get(key)).toBeUndefined();
    await store.set(key, record('a1'));
    expect(mode(dir)).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^gh-[0-9a-f]{32}\.json$/);
    expect(mode(join(dir, files[0]))).toBe(0o600);
    expect(await store.get(key)).toEqual(record('a1'));

    await store.set(key, record('a2'));
    expect(readdirSync(dir)).toEqual(files); // replaced by rename: no temporary file left
    expect((await store.get(key))?.tokens?.accessToken).toBe('a2');
    await store.delete(key);
    expect(await store.get(key)).toBeUndefined();
    await store.delete(key); // idempotent
  });

  test('a folder that others can read is narrowed to 0700', async () => {
    const dir = join(tempDir(), 'oauth');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    await new FileTokenStore(dir).set('k', record('a'));
    expect(mode(dir)).toBe(0o700);
  });

  test('keys of different servers and URLs never share a file', () => {
    const store = new FileTokenStore('/nowhere');
    const a = store.fileFor(tokenStoreKey('gh', new URL('https://a.example/mcp')));
    const b = store.fileFor(tokenStoreKey('gh', new URL('https://b.example/mcp')));
    const c = store.fileFor(tokenStoreKey('../../etc', new URL('https://a.example/mcp')));
    expect(new Set([a, b, c]).size).toBe(3);
    expect(c.startsWith('/nowhere/')).toBe(true);
    expect(c.slice('/nowhere/'.length)).not.toContain('/');
  });

  test('an unreadable or foreign file is as good as none', async () => {
    const dir = join(tempDir(), 'oauth');
    const store = new FileTokenStore(dir);
    mkdirSync(dir, { recursive: true });
    writeFileSync(store.fileFor('k'), '{not json');
    expect(await store.get('k')).toBeUndefined();
    writeFileSync(store.fileFor('k'), JSON.stringify({ version: 9 }));
    expect(await store.get('k')).toBeUndefined();
  });

  test('after a real login the tokens are on disk only for the user', async () => {
    const f = await startOAuthFixture();
    try {
      const dir = join(tempDir(), 'oauth');
      const provider = createOAuthProvider({ server: 'gh', resourceUrl: f.resource, tokenStore: new FileTokenStore(dir), authorize: followAuthorization });
      await provider.login();
      const [file] = readdirSync(dir);
      expect(mode(dir)).toBe(0o700);
      expect(mode(join(dir, file))).toBe(0o600);
      const stored = await new FileTokenStore(dir).get(tokenStoreKey('gh', f.resource));
      expect(stored).toMatchObject({ server: 'gh', resource: f.resource.href, issuer: f.url, client: { kind: 'dynamic' } });
      expect(stored?.tokens?.refreshToken).toEqual(expect.any(String));
    } finally {
      await f.close();
    }
  });
});
