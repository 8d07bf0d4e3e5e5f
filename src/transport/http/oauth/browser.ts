import { spawn } from 'node:child_process';
import { insecure } from './url-guard.js';

/** A program and its argument vector; run without a shell, so nothing in the URL is interpreted. */
export interface OpenerCommand {
  command: string;
  args: string[];
}

/**
 * How to open `url` in the user's browser on `platform`, the URL one argument of its own:
 * `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows (not `cmd /c start`,
 * whose parser would run `|calc.exe|` and expand `%VAR%` in a URL), else `xdg-open`.
 */
export function browserCommand(platform: NodeJS.Platform, url: URL): OpenerCommand {
  if (platform === 'darwin') return { command: 'open', args: [url.href] };
  if (platform === 'win32') return { command: 'rundll32.exe', args: ['url.dll,FileProtocolHandler', url.href] };
  return { command: 'xdg-open', args: [url.href] };
}

export interface OpenOptions {
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** The opener's environment; default this process's (a desktop opener needs DISPLAY, DBUS and the like). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Tries the desktop's opener on an https URL (http only on loopback); returns whether one
 * was started. Any other scheme (`file:`, `javascript:`, a UNC path) is never handed to it.
 * The printed URL is the fallback, so a missing opener is no failure.
 */
export function openInBrowser(url: URL, options: OpenOptions = {}): boolean {
  if (insecure(url) !== undefined) return false;
  const { command, args } = browserCommand(options.platform ?? process.platform, url);
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true, shell: false, windowsHide: true, env: options.env ?? process.env });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
