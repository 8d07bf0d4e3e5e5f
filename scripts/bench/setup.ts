import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { safeEnvironment } from '../../src/transport/stdio/child-env.js';

/** The checkout: the nearest folder above this file with a package.json (works from `scripts/` and `dist-bench/scripts/`). */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'test/fixtures'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no checkout above ${from}`);
  }
}

/** The fixtures the bench runs (with the helper they import). */
const FIXTURES = ['bench-echo-server.mjs', 'bench-stubborn-server.mjs', 'slow-init.mjs', 'lib/mini-mcp.mjs', 'counts-starts.mjs'];
let fixtureDir: string | undefined;

/**
 * Where a fixture runs from: a private copy of test/fixtures made for this run and
 * removed at exit. A test run on the same checkout kills, at its end, every new process
 * whose command line points into test/fixtures — the bench's servers included.
 */
export function fixturePath(name: string): string {
  if (fixtureDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), `lazy-mcp-bench-fixtures-${process.pid}-`));
    for (const file of FIXTURES) cpSync(resolve(repoRoot, 'test/fixtures', file), join(dir, file));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    fixtureDir = dir;
  }
  return join(fixtureDir, name);
}

/**
 * The one environment every child gets, whichever client starts it: lazy-mcp's safe
 * allow-list of the host's variables. Passed explicitly to all three clients, so a
 * child never inherits a costly host variable (a big NODE_EXTRA_CA_CERTS costs ~80 ms
 * of Node start-up) in one column and not in another.
 */
export const childEnv: Record<string, string> = Object.freeze(safeEnvironment()) as Record<string, string>;

/** What to run: a fixture with this Node. */
export interface ServerSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function fixtureServer(name: string, ...args: string[]): ServerSpec {
  return { command: process.execPath, args: [fixturePath(name), ...args], env: { ...childEnv } };
}

let packageFixtureDir: string | undefined;

/**
 * A fixture that imports packages (the SDK servers), run from a private copy inside the
 * checkout (under dist-bench/, so node_modules resolves), removed at exit. Same name
 * pattern as {@link fixturePath}'s folder, so the bench test finds what it leaves.
 */
export function packageFixtureServer(name: string, ...args: string[]): ServerSpec {
  if (packageFixtureDir === undefined) {
    const parent = join(repoRoot, 'dist-bench');
    mkdirSync(parent, { recursive: true });
    const dir = mkdtempSync(join(parent, `lazy-mcp-bench-fixtures-${process.pid}-`));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    packageFixtureDir = dir;
  }
  const path = join(packageFixtureDir, name);
  if (!existsSync(path)) cpSync(resolve(repoRoot, 'test/fixtures', name), path);
  return { command: process.execPath, args: [path, ...args], env: { ...childEnv } };
}

export function packageVersion(path: string): string {
  return (JSON.parse(readFileSync(resolve(repoRoot, path), 'utf8')) as { version: string }).version;
}
