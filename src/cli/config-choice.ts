import { resolve } from 'node:path';
import { McpError, McpServerManager, type FileOptions, type ManagerOptions } from '../index.js';
import { parseConfig } from '../manager/config/config.js';
import { type ConfigFile, readConfigFile } from '../manager/config/config-text.js';
import { CONFIG_ENV_VARIABLE, discoverConfig, type DiscoveryOptions, type HostName, readHostConfig } from '../manager/config/config-discovery.js';
import { UsageError } from './args.js';

/** Which config the command line asks for: a file, an application's, or the default lookup. */
interface ConfigRequest {
  config?: string;
  from?: HostName;
}

/** The config chosen, and a few words on how (for `--verbose`). */
interface ChosenConfig {
  file: ConfigFile;
  origin: string;
}

/**
 * `--config FILE`, else `--from APP`, else `$LAZY_MCP_CONFIG`, else the nearest project
 * file. Finding none is a usage error (exit 2) naming the places looked at; a file that
 * cannot be read or parsed throws `invalid-config`.
 */
export function chooseConfig(request: ConfigRequest, options: DiscoveryOptions = {}): ChosenConfig {
  if (request.config !== undefined) return { file: readConfigFile(resolve(options.cwd ?? process.cwd(), request.config)), origin: '--config' };
  const found = request.from === undefined ? discoverConfig(options) : readHostConfig(request.from, options);
  if (found.file !== undefined) return found;
  const hint = request.from === undefined ? `; give --config FILE, set ${CONFIG_ENV_VARIABLE}, or read an app's with --from claude-desktop|claude-code|cursor|vscode` : '';
  throw new UsageError(`no config found; looked at ${found.looked.join('; ')}${hint}`);
}

/** A manager on the chosen config; its whole-file errors name the file. */
export function managerFor(chosen: ChosenConfig, options: ManagerOptions & FileOptions): McpServerManager {
  const { watch, ...managerOptions } = options;
  // A file read as it is can be followed; an app's config (`--from`) is a view built from it.
  if (watch && !chosen.origin.startsWith('--from')) return McpServerManager.fromFile(chosen.file.path, { ...managerOptions, watch });
  try {
    return new McpServerManager(parseConfig(chosen.file.document, process.env, chosen.file.source), managerOptions);
  } catch (error) {
    if (error instanceof McpError) throw new McpError(error.code, `${chosen.file.path}: ${error.message}`, { phase: 'config' });
    throw error;
  }
}
