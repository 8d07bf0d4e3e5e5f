import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { McpError } from '../../../src/errors.js';
import { McpServerManager } from '../../../src/manager/manager.js';
import { packageRunner, withDownloadHint } from '../../../src/manager/config/runner-hint.js';
import { fixture } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

describe('packageRunner', () => {
  it.each([
    ['npx', ['-y', 'pkg'], 'npx'],
    ['/usr/local/bin/npx', [], 'npx'],
    ['C:\\Program Files\\nodejs\\npx.cmd', [], 'npx'],
    ['uvx', ['mcp-server-time'], 'uvx'],
    ['bunx', [], 'bunx'],
    ['pnpm', ['dlx', 'pkg'], 'pnpm dlx'],
    ['yarn', ['dlx', 'pkg'], 'yarn dlx'],
    ['npm', ['exec', 'pkg'], 'npm exec'],
    ['pnpm', ['run', 'x'], undefined],
    ['node', ['server.js'], undefined],
    ['npx-helper', [], undefined],
  ])('%s %j is %s', (command, args, runner) => {
    expect(packageRunner(command, args)).toBe(runner);
  });

  it('leaves other errors, other commands and a server that printed something alone', () => {
    const timeout = new McpError('timeout', 'server "s": initialize timed out after 10 ms; the server did not finish starting', { server: 's', phase: 'initialize' });
    expect(withDownloadHint(timeout, { command: 'node' }, true)).toBe(timeout);
    expect(withDownloadHint(timeout, { command: 'npx' }, false)).toBe(timeout);
    const withStderr = new McpError('timeout', 'x', { stderrTail: ['npm warn exec'] });
    expect(withDownloadHint(withStderr, { command: 'npx' }, true)).toBe(withStderr);
    const crash = new McpError('peer-exited', 'x');
    expect(withDownloadHint(crash, { command: 'npx' }, true)).toBe(crash);
    const once = withDownloadHint(timeout, { command: 'npx' }, true);
    expect(withDownloadHint(once, { command: 'npx' }, true)).toBe(once);
    expect(withDownloadHint(timeout, { command: 'uvx' }, true)).toMatchObject({ code: 'timeout', server: 's', phase: 'initialize', message: expect.stringContaining('; it printed nothing: uvx may still be downloading') });
  });
});

describe('a start that times out under a package runner', () => {
  // A command *named* like a runner: a symlink to this Node, running a fixture that says nothing.
  const runnerNamed = (name: string): string => {
    const path = join(tempDir(), name);
    symlinkSync(process.execPath, path);
    return path;
  };
  const silent = fixture('silent-start.mjs');
  const talkative = fixture('never-initializes.mjs');

  it('says the runner may be downloading when the start\'s own time-out passes in silence', async () => {
    const npx = runnerNamed('npx');
    const manager = McpServerManager.fromConfig({
      mcpServers: {
        quiet: { command: npx, args: silent.args, timeout: 300 },
        plain: { command: runnerNamed('node'), args: silent.args, timeout: 300 },
        // Long enough for its first stderr line to arrive on a loaded machine.
        talks: { command: npx, args: talkative.args, timeout: 3000 },
      },
    });
    try {
      const [quiet, plain, talks] = await Promise.all(['quiet', 'plain', 'talks'].map((s) => manager.callServerTool(s, 'x').then(() => undefined, (e: McpError) => e)));
      expect(quiet).toMatchObject({ code: 'timeout', phase: 'initialize' });
      expect(quiet?.message).toBe(
        'server "quiet": initialize timed out after 300 ms; the server did not finish starting; it printed nothing: npx may still be downloading the package (a first run, or offline without it in the cache); run the command once by hand, or raise the server\'s "timeout"',
      );
      expect(manager.status().quiet.lastError?.message).toBe(quiet?.message);
      expect(plain).toMatchObject({ code: 'timeout' });
      expect(plain?.message).not.toContain('downloading');
      expect(talks?.message).not.toContain('downloading');
      expect(talks?.stderrTail).toEqual(['never-initializes: up, not answering']);
    } finally {
      await manager.shutdown();
    }
  });

  it('says so too when the call\'s own time-out ends its wait for that start', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { quiet: { command: runnerNamed('npx'), args: silent.args, timeout: 20_000 } } });
    try {
      const error = await manager.callServerTool('quiet', 'x', {}, { timeout: 300 }).catch((e: McpError) => e);
      expect(error).toMatchObject({ code: 'timeout' });
      expect((error as McpError).message).toMatch(/^server "quiet": waiting for the server to start timed out after 300 ms; it printed nothing: npx may still be downloading/);
    } finally {
      await manager.shutdown();
    }
  });
});
