import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startOAuthFixture, type OAuthFixture } from '../transport/http/oauth/oauth-fixture.js';
import { runCli, scratchDir } from './run-cli.js';

describe('lazy-mcp login <server>', () => {
  let f: OAuthFixture;
  const scratch = scratchDir();
  beforeAll(async () => {
    f = await startOAuthFixture({ mcp: true, challengeScope: 'read write' });
  });
  afterAll(async () => {
    await f.close();
    scratch.remove();
  });

  it('prints the URL, takes the redirect on its loopback listener, and stores tokens the next command uses', async () => {
    const config = join(scratch.path, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { gh: { type: 'http', url: f.resource.href, oauth: {} } } }));
    // No desktop: nothing is opened, the URL is only printed.
    const env = { XDG_STATE_HOME: join(scratch.path, 'state'), DISPLAY: '', WAYLAND_DISPLAY: '' };

    const before = await runCli(['--config', config, 'call', 'mcp__gh__whoami'], { env });
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('lazy-mcp login gh');

    let browsed: Promise<string> | undefined;
    const run = await runCli(['--config', config, 'login', 'gh'], {
      env,
      timeoutMs: 30_000,
      onSpawn: (child, output) => {
        // The "browser": once the URL is on stderr, follow it (the redirect reaches the CLI's listener).
        const poll = setInterval(() => {
          const url = /https?:\/\/\S+\/authorize\?\S+/.exec(output.stderr())?.[0];
          if (!url) return;
          clearInterval(poll);
          browsed = fetch(url).then((r) => r.text());
        }, 20);
        child.once('close', () => clearInterval(poll));
      },
    });
    expect(run.stderr).toContain('To authorize "gh", open this URL in a browser');
    expect(run.code).toBe(0);
    expect(await browsed).toContain('Authorization complete');
    expect(run.stderr).toContain('"gh" is authorized');
    expect(readdirSync(join(scratch.path, 'state', 'lazy-mcp', 'oauth'))).toHaveLength(1);

    const after = await runCli(['--config', config, 'call', 'mcp__gh__whoami'], { env });
    expect(after.stdout.trim()).toBe('read write');
    expect(after.code).toBe(0);
  });

  it('a server that has no oauth cannot log in: a usage-like failure naming why', async () => {
    const config = join(scratch.path, 'plain.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { plain: { type: 'http', url: f.resource.href } } }));
    const run = await runCli(['--config', config, 'login', 'plain'], { env: { XDG_STATE_HOME: join(scratch.path, 'state2') } });
    expect(run.code).toBe(2); // the caller's mistake, as for any invalid-arguments
    expect(run.stderr).toContain('login needs an HTTP server with "oauth"');
  });

  it('--principal applies to a server run per principal; for a shared one it is refused, naming why', async () => {
    const config = join(scratch.path, 'shared.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { plain: { type: 'http', url: f.resource.href } } }));
    const run = await runCli(['--config', config, 'login', 'plain', '--principal', 'alice'], { env: { XDG_STATE_HOME: join(scratch.path, 'state3') } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("login's principal applies to a server run per principal");
  });
});
