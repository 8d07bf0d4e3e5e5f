import { copyFileSync, mkdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from '../support/fixtures.js';
import { runNode, scratchDir } from './run-cli.js';

// `npm start` runs scripts/build-if-stale.mjs before the demo: a build only when a source
// or build setting is newer than the last build. Run here on a one-file project of its own
// (the script finds its project from where it lies), so the repository's dist/ is never touched.
let scratch: ReturnType<typeof scratchDir>;
beforeAll(() => {
  scratch = scratchDir();
});
afterAll(() => scratch.remove());

it('builds when dist/ is missing or older than a source, and not otherwise', async () => {
  const root = scratch.path;
  mkdirSync(join(root, 'scripts'));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  copyFileSync(resolve(repoRoot, 'scripts/build-if-stale.mjs'), join(root, 'scripts/build-if-stale.mjs'));
  symlinkSync(resolve(repoRoot, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module', scripts: { build: 'tsc -p tsconfig.build.json' } }));
  writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  const compilerOptions = { outDir: 'dist', rootDir: 'src', module: 'NodeNext', target: 'ES2022', types: [] };
  writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ compilerOptions, include: ['src'] }));
  const source = join(root, 'src/cli/demo.ts');
  writeFileSync(source, 'export const demo: string = "first";\n');
  const built = join(root, 'dist/cli/demo.js');
  const start = () => runNode(join(root, 'scripts/build-if-stale.mjs'), [], { cwd: root, timeoutMs: 60_000 });

  const first = await start();
  expect(first).toMatchObject({ code: 0, stderr: 'building dist/ (sources changed since the last build)…\n' });
  const builtAt = statSync(built).mtimeMs;

  // Nothing changed: no build, so the output is not even rewritten.
  expect(await start()).toMatchObject({ code: 0, stdout: '', stderr: '' });
  expect(statSync(built).mtimeMs).toBe(builtAt);

  // A source edited after the build: built again.
  writeFileSync(source, 'export const demo: string = "second";\n');
  const later = new Date(builtAt + 5000);
  utimesSync(source, later, later);
  expect(await start()).toMatchObject({ code: 0, stderr: 'building dist/ (sources changed since the last build)…\n' });
  expect(statSync(built).mtimeMs).toBeGreaterThan(builtAt);
}, 90_000);
