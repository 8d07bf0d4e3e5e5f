// node:fs plus the one `globSync` form the conformance suite uses: `**/<file name>` under `cwd`.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

export * from 'node:fs';

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
  if (!match) throw new Error(`fs-with-glob: only "**/<name>" patterns are supported, got ${JSON.stringify(pattern)}`);
  const cwd = options.cwd ?? process.cwd();
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === match[1]) found.push(relative(cwd, path));
    }
  };
  walk(cwd);
  return found;
}
