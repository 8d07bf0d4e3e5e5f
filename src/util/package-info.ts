import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fs } from './lazy-builtins.js';

/**
 * The package's own folder: the nearest one above this module holding a `package.json`.
 * Found, not counted, because this module's depth differs between `src/util/` (ts-jest),
 * `dist/util/` (tsc's output) and a bundle's entry or chunk (`dist/`, `dist/chunks/`).
 */
export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (fs.existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** The package version, for `--version`, `clientInfo` and the pool daemon's handshake. */
export function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}
