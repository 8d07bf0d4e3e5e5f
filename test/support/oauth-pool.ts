import type { McpServerManager } from '../../src/manager/manager.js';
import type { OAuthRecord, TokenStore } from '../../src/transport/http/oauth/token-store.js';
import { startOAuthFixture, type OAuthFixture } from '../transport/http/oauth/oauth-fixture.js';

/** A token store in memory, whose records a test can read. */
export class MemoryStore implements TokenStore {
  readonly records = new Map<string, OAuthRecord>();
  async get(key: string) {
    return this.records.get(key);
  }
  async set(key: string, value: OAuthRecord) {
    this.records.set(key, value);
  }
  async delete(key: string) {
    this.records.delete(key);
  }
}

/** The host's "browser": follows the authorization URL, whose redirect lands on the loopback listener. */
export const browse = (url: URL): void => void fetch(url).then((r) => r.text(), () => undefined);

/**
 * For each test of a `describe`: a fresh OAuth fixture (authorization server and MCP
 * resource on 127.0.0.1, started with `options`) handed to `use`, and the returned list
 * for the managers the test makes. After the test the managers shut down, then the fixture closes.
 */
export function oauthFixtureEach(options: Record<string, unknown>, use: (fixture: OAuthFixture) => void): McpServerManager[] {
  const managers: McpServerManager[] = [];
  let fixture: OAuthFixture | undefined;
  beforeEach(async () => {
    fixture = await startOAuthFixture(options);
    use(fixture);
  });
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
    await fixture?.close();
  });
  return managers;
}
