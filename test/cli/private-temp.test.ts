import { chmodSync, chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';
import { runCli } from './run-cli.js';

const entity = JSON.stringify({ entities: [{ name: 'secret-plan', entityType: 'note', observations: ['private'] }] });

/** A folder as a squatter leaves it: writable by anyone, and (where the test may) owned by another user. */
function squat(dir: string): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o777);
  if (process.getuid?.() === 0) chownSync(dir, 65534, 65534);
}

describe("the bundled config's temp folder (item 10)", () => {
  it('is a private folder in the state dir, never a $TMPDIR/lazy-mcp-<uid> someone else created first', async () => {
    const tmp = tempDir();
    const state = tempDir();
    const squatted = join(tmp, `lazy-mcp-${process.getuid?.()}`);
    squat(squatted);
    const run = await runCli(['call', 'mcp__memory__create_entities', entity, '--config', join(repoRoot, 'examples/mcp.json')], {
      cwd: tmp,
      env: { TMPDIR: tmp, XDG_STATE_HOME: state },
    });
    expect(run.code).toBe(0);
    expect(existsSync(join(squatted, 'memory.json'))).toBe(false);
    const own = join(state, 'lazy-mcp', 'tmp');
    expect(existsSync(join(own, 'memory.json'))).toBe(true);
    expect(statSync(own).mode & 0o777).toBe(0o700);
  });

  it('is a fresh folder of its own when the state dir\'s one is not private', async () => {
    const tmp = tempDir();
    const state = tempDir();
    const open = join(state, 'lazy-mcp', 'tmp');
    squat(open);
    const run = await runCli(['call', 'mcp__memory__create_entities', entity, '--config', join(repoRoot, 'examples/mcp.json')], {
      cwd: tmp,
      env: { TMPDIR: tmp, XDG_STATE_HOME: state },
    });
    expect(run.code).toBe(0);
    expect(existsSync(join(open, 'memory.json'))).toBe(false);
  });
});
