import { isAbsolute, join } from 'node:path';
import { homedir } from './lazy-builtins.js';

/**
 * The per-user folder for lazy-mcp's own state (saved long results; OAuth tokens and the
 * orphan record when those land): `%LOCALAPPDATA%\lazy-mcp` on Windows,
 * `~/Library/Application Support/lazy-mcp` on macOS, else `$XDG_STATE_HOME/lazy-mcp`
 * (a relative XDG value is ignored, as the XDG spec says) or `~/.local/state/lazy-mcp`.
 */
export function defaultStateDir(
  platform: NodeJS.Platform = process.platform,
  env: Record<string, string | undefined> = process.env,
  home: string = homedir(),
): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'lazy-mcp');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'lazy-mcp');
  const xdg = env.XDG_STATE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.local', 'state'), 'lazy-mcp');
}
