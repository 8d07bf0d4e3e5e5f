import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * (the memory server's folder; default a per-user folder under the OS temp dir).
 */
export function prepareEnvironment(env: NodeJS.ProcessEnv = process.env, tmp?: string): void {
  env.LAZY_MCP_HOME ||= packageRoot;
  env.LAZY_MCP_NODE ||= process.execPath;
  if (tmp !== undefined) env.LAZY_MCP_TMP = tmp;
  if (!env.LAZY_MCP_TMP) {
    // Per user, so two users of one machine never share (or fight over) the memory file.
    env.LAZY_MCP_TMP = join(tmpdir(), `lazy-mcp-${process.getuid?.() ?? 'user'}`);
    mkdirSync(env.LAZY_MCP_TMP, { recursive: true, mode: 0o700 });
  }
}
