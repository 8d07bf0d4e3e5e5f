import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * Creates `dir` and its missing parents one `mkdir` at a time, each with `mode` (less the
 * umask); an existing folder is left as it is. Not `mkdir({ recursive: true })`: on Node 20
 * that spins a thread-pool thread forever on some paths (a folder under
 * /proc/self/root/proc), and whatever awaits it never ends.
 */
export async function makeDir(dir: string, mode: number): Promise<void> {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      await mkdir(at, { mode });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') break;
      if (code !== 'ENOENT' || dirname(at) === at) throw error;
      missing.push(at);
    }
  }
  for (const at of missing.reverse()) {
    await mkdir(at, { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
