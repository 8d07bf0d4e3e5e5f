import { dirname, join, resolve } from 'node:path';
import { type ConfigFile, readConfigFile } from './config-text.js';
import { isObject } from './config.js';
import { fs, homedir } from '../../util/lazy-builtins.js';

/** The environment variable naming a config file (relative to the working directory). */
export const CONFIG_ENV_VARIABLE = 'LAZY_MCP_CONFIG';

/** Project config files, looked for in this order in each folder from the working directory up. */
export const PROJECT_CONFIG_FILES = ['.mcp.json', '.vscode/mcp.json', '.cursor/mcp.json'] as const;

/** Applications whose user-level MCP config can be read with `--from`. */
export const HOST_NAMES = ['claude-desktop', 'claude-code', 'cursor', 'vscode'] as const;
export type HostName = (typeof HOST_NAMES)[number];

/** Where to look; each defaults to this process's. Tests pass their own. */
export interface DiscoveryOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  home?: string;
}

/** A config found, with how it was found (for `--verbose`), or the places looked at in vain. */
export type Discovery = { file: ConfigFile; origin: string } | { file?: undefined; looked: string[] };

/**
 * The config to use when none is named: the file in `$LAZY_MCP_CONFIG`, else the nearest
 * project file from the working directory up. Reading it may throw `invalid-config`.
 */
export function discoverConfig(options: DiscoveryOptions = {}): Discovery {
  const cwd = options.cwd ?? process.cwd();
  const named = (options.env ?? process.env)[CONFIG_ENV_VARIABLE];
  if (named) return { file: readConfigFile(resolve(cwd, named)), origin: `$${CONFIG_ENV_VARIABLE}` };
  const path = findProjectConfig(cwd);
  if (path !== undefined) return { file: readConfigFile(path), origin: `found from ${cwd}` };
  return { looked: [`$${CONFIG_ENV_VARIABLE} (not set)`, `${PROJECT_CONFIG_FILES.join(', ')} in ${cwd} and every folder above it`] };
}

/** The nearest project config file from `cwd` up to the root of the file system. */
export function findProjectConfig(cwd: string): string | undefined {
  for (let folder = resolve(cwd); ; folder = dirname(folder)) {
    for (const name of PROJECT_CONFIG_FILES) {
      const path = join(folder, name);
      if (fs.existsSync(path)) return path;
    }
    if (dirname(folder) === folder) return undefined;
  }
}

/**
 * The files an application keeps its user-level MCP servers in, most specific first, at
 * the locations each documents for this platform.
 */
export function hostConfigPaths(host: HostName, options: DiscoveryOptions = {}): string[] {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const home = options.home ?? homedir();
  // Per-user application data: where Claude Desktop and VS Code keep their settings.
  const appData =
    platform === 'darwin' ? join(home, 'Library', 'Application Support') : platform === 'win32' ? (env.APPDATA ?? join(home, 'AppData', 'Roaming')) : (env.XDG_CONFIG_HOME || join(home, '.config'));
  switch (host) {
    case 'claude-desktop':
      return [join(appData, 'Claude', 'claude_desktop_config.json')];
    case 'claude-code':
      return [join(home, '.claude.json')];
    case 'cursor':
      return [join(home, '.cursor', 'mcp.json')];
    case 'vscode':
      // mcp.json since VS Code 1.102; before, the "mcp" key of settings.json.
      return [join(appData, 'Code', 'User', 'mcp.json'), join(appData, 'Code', 'User', 'settings.json')];
  }
}

/**
 * An application's user-level MCP config, as a config document lazy-mcp reads:
 * Claude Code's user servers overlaid with those of the project the working directory
 * is in, VS Code's `mcp.json` or the `mcp` section of its settings.
 */
export function readHostConfig(host: HostName, options: DiscoveryOptions = {}): Discovery {
  const paths = hostConfigPaths(host, options);
  const path = paths.find((candidate) => fs.existsSync(candidate));
  if (path === undefined) return { looked: paths };
  const file = readConfigFile(path);
  const document = hostDocument(host, path, file.document, resolve(options.cwd ?? process.cwd()));
  // Outside a workspace there is no ${workspaceFolder}: VS Code's user servers do not have one either.
  if (document === undefined) return { looked: [`${path} (it has no MCP servers)`] };
  return { file: { path, text: file.text, document, source: {} }, origin: `--from ${host}` };
}

function hostDocument(host: HostName, path: string, document: unknown, cwd: string): unknown {
  if (!isObject(document)) return undefined;
  if (host === 'claude-code') {
    const servers = { ...asObject(document.mcpServers), ...asObject(projectOf(document.projects, cwd)?.mcpServers) };
    return Object.keys(servers).length > 0 ? { mcpServers: servers } : undefined;
  }
  if (host === 'vscode' && path.endsWith('settings.json')) {
    const mcp = isObject(document.mcp) ? document.mcp : { servers: document['mcp.servers'], inputs: document['mcp.inputs'] };
    return isObject(mcp.servers) ? { servers: mcp.servers, ...(mcp.inputs === undefined ? {} : { inputs: mcp.inputs }) } : undefined;
  }
  return isObject(document.mcpServers) || isObject(document.servers) ? document : undefined;
}

/** Claude Code keeps per-project ("local") servers under the project's folder: the nearest one holding `cwd`. */
function projectOf(projects: unknown, cwd: string): Record<string, unknown> | undefined {
  if (!isObject(projects)) return undefined;
  for (let folder = cwd; ; folder = dirname(folder)) {
    const project = projects[folder];
    if (isObject(project)) return project;
    if (dirname(folder) === folder) return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}
