import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own folder: `dist/util/` (or `src/util/` under ts-jest) is two levels below it. */
export const packageRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/[\\/]$/, '');

/** The package version, for `--version`, `clientInfo` and the pool daemon's handshake. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}
