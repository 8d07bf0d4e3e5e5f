#!/usr/bin/env node
// The package's build (`npm run build`): dist/ from scratch, tsc's output, then the bundles.
//
// Bundles each entry point of the package into one file (plus shared chunks, and one chunk
// per dynamic import so what loads lazily still does), written over tsc's output of the
// same entries in dist/. Loading a hundred small modules costs more than compiling one
// file (issue 34); the layers stay separate in src/, and the source maps point there.
// tsc's per-module output stays beside the bundles: the type declarations come from it,
// and tests that reach into one internal module import it from there.
//
// Rollup cuts the chunks, esbuild strips the types of each module on the way in. Rollup
// because it knows what an importer has already loaded: a module the entry loads stays in
// the entry's chunk, and a lazily loaded chunk imports it from there. esbuild's splitting
// cut a chunk for every distinct set of importers, so an import loaded eighteen files where
// three hold the same code; each ESM file costs ~0.4 ms to resolve, read and link.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { rollup } from 'rollup';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Bundle name (under dist/) → its source, in groups built apart. A group's entries share
 * chunks; groups share none, so a process loads a few files, not the slivers that every
 * entry's overlap would cut. The library's two entries are one group: one process may
 * import both, and must see one `McpError`. The CLI and the daemon are processes of their
 * own (the daemon's main is spawned by path).
 */
export const GROUPS = {
  lib: { index: 'src/index.ts', adapters: 'src/adapters.ts' },
  cli: { 'cli/main': 'src/cli/main.ts', 'cli/demo': 'src/cli/demo.ts' },
  daemon: { 'share/daemon/main': 'src/share/daemon/main.ts' },
};

// From scratch: tsc leaves the output of a deleted source behind, and chunk names carry a
// hash of their content, so the last build's would pile up (and be packed).
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

/** Source modules in, JavaScript out: a relative `./x.js` import is read from `./x.ts`. */
const typescript = {
  name: 'typescript',
  resolveId(source, importer) {
    if (!importer || !source.startsWith('.')) return null;
    return resolve(dirname(importer), source.replace(/\.js$/, '.ts'));
  },
  async transform(code, id) {
    if (!id.endsWith('.ts')) return null;
    const { code: js, map } = await transform(code, { loader: 'ts', format: 'esm', target: 'node20', sourcemap: true, sourcefile: id });
    return { code: js, map };
  },
};

const modules = {};
for (const [group, entries] of Object.entries(GROUPS)) Object.assign(modules, await bundle(group, entries));

/** One group's build; which source modules each file it wrote holds. */
async function bundle(group, entries) {
  const built = await rollup({
    input: Object.fromEntries(Object.entries(entries).map(([out, source]) => [out, join(root, source)])),
    // Dependencies stay in node_modules: they are loaded (lazily, most of them) as they are.
    external: (id) => builtinModules.includes(id) || id.startsWith('node:') || !/^[./]/.test(id),
    plugins: [typescript],
    onwarn(warning, warn) {
      // Cycles between modules are the source's own (and harmless in ESM); anything else is shown.
      if (warning.code !== 'CIRCULAR_DEPENDENCY') warn(warning);
    },
  });
  const { output } = await built.write({
    dir: join(root, 'dist'),
    format: 'es',
    chunkFileNames: `chunks/${group}/[name]-[hash].js`,
    // Linked maps that carry the sources: the package is debuggable without src/ beside it.
    // Not minified: it saved no measurable start-up (a paired run: 1.00×), and unminified a
    // stack trace reads without the map.
    sourcemap: true,
  });
  await built.close();
  return Object.fromEntries(
    output.filter((file) => file.type === 'chunk').map((chunk) => [`dist/${chunk.fileName}`, Object.keys(chunk.modules).map((id) => relative(root, id))]),
  );
}

// Which source modules each output file holds: what loaded a module, read from the chunks a
// process loaded (test/lazy-loading.test.ts).
writeFileSync(join(root, 'dist', 'bundle-modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
