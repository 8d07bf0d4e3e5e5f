#!/usr/bin/env node
// The package's build (`npm run build`): dist/ from scratch, tsc's output, then the bundles.
//
// Bundles each entry point of the package into one file (plus shared chunks, and one chunk
// per dynamic import so what loads lazily still does), written over tsc's output of the
// same entries in dist/. Loading a hundred small modules costs more than compiling one
// file (issue 34); the layers stay separate in src/, and the source maps point there.
// tsc's per-module output stays beside the bundles: the type declarations come from it,
// and tests that reach into one internal module import it from there.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

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

const outputs = {};
for (const [group, entries] of Object.entries(GROUPS)) Object.assign(outputs, (await bundle(group, entries)).metafile.outputs);

/** One group's build. */
function bundle(group, entries) {
  return build({
    absWorkingDir: root,
    entryPoints: Object.entries(entries).map(([out, source]) => ({ in: source, out })),
    outdir: 'dist',
    chunkNames: `chunks/${group}/[name]-[hash]`,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies stay in node_modules: they are loaded (lazily, most of them) as they are.
    packages: 'external',
    sourcemap: 'linked',
    // The sources ride in the maps: the package is debuggable without src/ beside it.
    sourcesContent: true,
    // Not minified: it saved no measurable start-up (a paired run: 1.00×), and unminified
    // a stack trace reads without the map.
    metafile: true,
    logLevel: 'warning',
  });
}

// Which source modules each output file holds: what loaded a module, read from the chunks a
// process loaded (test/lazy-loading.test.ts).
const modules = Object.fromEntries(
  Object.entries(outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, output]) => [file, Object.keys(output.inputs)]),
);
writeFileSync(join(root, 'dist', 'bundle-modules.json'), `${JSON.stringify(modules, null, 1)}\n`);
