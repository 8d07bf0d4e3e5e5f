import { lstatSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultStateDir } from '../manager/config/state-dir.js';

/** The package's own folder: `dist/cli/` (or `src/cli/` under ts-jest) is two levels below it. */
export const packageRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/[\\/]$/, '');

/** The example config that ships with the package, for the demo (`npm start`); it works from any working directory. */
export const bundledConfigPath = join(packageRoot, 'examples', 'mcp.json');

/** The package version, for `--version` and `clientInfo`. */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/**
 * Sets the variables the bundled config refers to, unless the user set them: config
 * files hold only strings, so `${LAZY_MCP_NODE}` and `${LAZY_MCP_HOME}` are how they run
 * the reference servers from this package's node_modules with this very Node, from any
 * working directory and without npx or the network. `tmp` overrides `LAZY_MCP_TMP`
 * (the memory server's folder; default `tmp` in the state folder, private to the user).
 */
export function prepareEnvironment(env: NodeJS.ProcessEnv = process.env, tmp?: string): void {
  env.LAZY_MCP_HOME ||= packageRoot;
  env.LAZY_MCP_NODE ||= process.execPath;
  if (tmp !== undefined) env.LAZY_MCP_TMP = tmp;
  // Never a folder found under the shared temp dir: whoever made it first could read and plant the memory file.
  env.LAZY_MCP_TMP ||= privateFolder(join(defaultStateDir(process.platform, env), 'tmp')) ?? mkdtempSync(join(tmpdir(), 'lazy-mcp-'));
}

/** `dir`, created if missing, when it is a real folder of ours that no one else can write or read; else undefined. */
function privateFolder(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    if (!info.isDirectory()) return undefined;
    if (process.platform === 'win32') return dir;
    return info.uid === process.getuid?.() && (info.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}
