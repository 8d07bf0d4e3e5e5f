#!/usr/bin/env node
// `npm start` builds dist/ only when a source or build setting is newer than the last
// build: a second start goes straight to the demo instead of type-checking for half a minute.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'demo.js');

/** The newest modification time under `path` (a file or a folder), in ms; 0 if absent. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

const sources = Math.max(newest(join(root, 'src')), newest(join(root, 'tsconfig.json')), newest(join(root, 'tsconfig.build.json')), newest(join(root, 'package.json')));
if (newest(built) === 0 || sources > newest(built)) {
  process.stderr.write('building dist/ (sources changed since the last build)…\n');
  // The package's own build script (tsc, then the bundles): one recipe, written in package.json.
  const npm = process.env.npm_execpath;
  if (npm) execFileSync(process.execPath, [npm, 'run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  else execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
