import type { McpServerManager } from '../../src/manager/manager.js';
import { startOAuthFixture, type OAuthFixture } from '../transport/http/oauth/oauth-fixture.js';

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
