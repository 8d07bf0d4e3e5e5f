import { chmodSync, chownSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { untrusted } from '../../src/manager/catalog/manifest-cache.js';
import { waitFor } from '../support/fixtures.js';
import { tempDir } from '../support/temp-dirs.js';
import { jsonFiles, manage, primed } from './cache-support.js';

/** A cache folder holding one entry for `s` whose tool was renamed to `poisoned` (as a planter would). */
async function poisoned(): Promise<{ dir: string; file: string }> {
  const { dir, file } = await primed();
  writeFileSync(file, readFileSync(file, 'utf8').replace('"name":"a"', '"name":"poisoned"'));
  return { dir, file };
}

describe('cache files and folders others could write are not trusted (item 5)', () => {
  it('a file with the right contents is served as is (the control)', async () => {
    const { dir } = await poisoned();
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['poisoned']);
    expect(next.starts).toEqual([]);
  });

  it('a cache file others can write is ignored: the server is asked instead', async () => {
    const { dir, file } = await poisoned();
    chmodSync(file, 0o666);
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
    expect(next.starts).toEqual(['s']);
    expect(next.logs.map((l) => String(l.data))).toContainEqual(expect.stringMatching(/ignoring the tool cache of server "s" .*: it can be written by other users \(mode 666\)/));
  });

  it('a cache folder others can write is ignored, and nothing is written there', async () => {
    const { dir, file } = await poisoned();
    chmodSync(dir, 0o777);
    const next = manage(dir);
    expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
    expect(next.starts).toEqual(['s']);
    const said = () => next.logs.map((l) => String(l.data)).join('\n');
    expect(said()).toMatch(new RegExp(`its folder ${dir} can be written by other users \\(mode 777\\)`));
    await next.manager.shutdown();
    expect(readFileSync(file, 'utf8')).toContain('"name":"poisoned"');
  });

  it('a cache file another user owns is ignored', async () => {
    const { dir, file } = await poisoned();
    // Only root can give a file away; elsewhere the rule is pinned by the check itself (below).
    if (process.getuid?.() === 0) {
      chownSync(file, 65534, 65534);
      const next = manage(dir);
      expect((await next.manager.listTools()).map((t) => t.tool.name)).toEqual(['a']);
      expect(next.logs.map((l) => String(l.data))).toContainEqual(expect.stringMatching(/: it is owned by another user \(uid 65534\)/));
    }
    expect(untrusted({ uid: 1001, mode: 0o100600 }, 1000)).toBe('is owned by another user (uid 1001)');
    expect(untrusted({ uid: 1000, mode: 0o40775 }, 1000)).toBe('can be written by other users (mode 775)');
    expect(untrusted({ uid: 1000, mode: 0o40700 }, 1000)).toBeUndefined();
  });

  it('creates a missing cache folder 0700', async () => {
    const dir = join(tempDir(), 'new', 'cache');
    const first = manage(dir);
    await first.manager.listTools();
    expect(await waitFor(() => jsonFiles(dir).length === 1, 5000)).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, jsonFiles(dir)[0])).mode & 0o777).toBe(0o600);
  });
});
