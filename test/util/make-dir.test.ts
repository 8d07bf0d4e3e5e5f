import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDir } from '../../src/util/make-dir.js';
import { tempDir } from '../support/temp-dirs.js';

describe('makeDir', () => {
  it('creates the folder and its missing parents with the mode, and leaves an existing one as it is', async () => {
    const root = tempDir();
    const deep = join(root, 'a', 'b', 'c');
    await makeDir(deep, 0o700);
    for (const dir of [join(root, 'a'), join(root, 'a', 'b'), deep]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    await expect(makeDir(deep, 0o700)).resolves.toBeUndefined();
    await expect(makeDir(join(root, 'a'), 0o755)).resolves.toBeUndefined();
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700);
  });

  it('rejects where a parent is a file', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'file'), '');
    await expect(makeDir(join(root, 'file', 'below'), 0o700)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('settles where mkdir({ recursive: true }) spins forever', async () => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), 5000)));
    const settled = makeDir('/proc/self/root/proc/lazy-mcp-test/dir', 0o700).then(
      () => 'resolved',
      (error: NodeJS.ErrnoException) => error.code,
    );
    try {
      expect(await Promise.race([settled, bound])).toMatch(/^E[A-Z]+$/);
    } finally {
      clearTimeout(timer);
    }
  });
});
