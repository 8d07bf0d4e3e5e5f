import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { McpError } from '../../errors.js';
import { defaultStateDir } from '../../util/state-dir.js';
import { WIRE_VERSION } from './wire.js';
import { mustBe } from '../../util/check.js';

/** How a client finds (or starts) the pool daemon. */
export interface SharedOptions {
  /**
   * The private folder of the socket, the locks and (unless `logFile`) the log. Default
   * `$LAZY_MCP_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/lazy-mcp`, else `<state dir>/daemon`.
   */
  runtimeDir?: string;
  /** How long a started daemon waits with no client before it exits, in ms. Default `$LAZY_MCP_DAEMON_IDLE_MS`, else 10 minutes. */
  idleTimeoutMs?: number;
  /** The lazy-mcp version this client speaks; daemons of other versions are never used. Default: this package's. */
  version?: string;
  /** The daemon's log. Default `<runtimeDir>/daemon.log` with a runtime dir given, else `<state dir>/daemon.log`. */
  logFile?: string;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Longest Unix socket path Linux takes (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/** Where one daemon version lives: its folder, socket, locks and log. */
export interface DaemonPaths {
  dir: string;
  socket: string;
  startLock: string;
  bindLock: string;
  log: string;
  /** The running daemon's secret (see secret.ts). */
  secret: string;
  /** The daemon's manifest cache: with the log (in the state dir, unless a runtime dir was given), as it outlives the runtime dir. */
  manifests: string;
}

export function daemonPaths(options: SharedOptions, version: string, env: NodeJS.ProcessEnv = process.env): DaemonPaths {
  const given = options.runtimeDir ?? nonEmpty(env.LAZY_MCP_RUNTIME_DIR);
  const xdg = nonEmpty(env.XDG_RUNTIME_DIR);
  const dir = resolve(given ?? (xdg && isAbsolute(xdg) ? join(xdg, 'lazy-mcp') : join(defaultStateDir(), 'daemon')));
  // The version names the socket: two versions never meet on one, each has its own daemon.
  const tag = `${versionTag(version)}-w${WIRE_VERSION}`;
  const socket = join(dir, `pool-${tag}.sock`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new McpError('invalid-config', `the pool daemon's socket path ${JSON.stringify(socket)} is longer than ${MAX_SOCKET_PATH} bytes; set LAZY_MCP_RUNTIME_DIR to a shorter folder`, {});
  }
  const log = options.logFile ?? (given ? join(dir, 'daemon.log') : join(defaultStateDir(), 'daemon.log'));
  const manifests = given ? join(dir, 'manifests') : join(defaultStateDir(), 'daemon-manifests');
  return { dir, socket, startLock: join(dir, `pool-${tag}.start.lock`), bindLock: join(dir, `pool-${tag}.bind.lock`), log, secret: join(dir, `pool-${tag}.secret`), manifests };
}

/** The idle time-out from the options or the environment, checked. */
export function idleTimeout(options: SharedOptions, env: NodeJS.ProcessEnv = process.env): number {
  const raw = options.idleTimeoutMs ?? (nonEmpty(env.LAZY_MCP_DAEMON_IDLE_MS) === undefined ? DEFAULT_IDLE_TIMEOUT_MS : Number(env.LAZY_MCP_DAEMON_IDLE_MS));
  if (!Number.isSafeInteger(raw) || raw <= 0 || raw > 2 ** 31 - 1) {
    throw new McpError('invalid-config', `the pool daemon's idle time-out: ${mustBe(options.idleTimeoutMs === undefined ? 'LAZY_MCP_DAEMON_IDLE_MS' : 'shared.idleTimeoutMs', 'a whole number of milliseconds from 1 to 2147483647', options.idleTimeoutMs ?? env.LAZY_MCP_DAEMON_IDLE_MS)}`, {});
  }
  return raw;
}

/**
 * Makes `dir` the user's private folder, or refuses it: created 0700 if missing; it must be
 * a real folder (no symlink) owned by this user; group and other access is taken away.
 * A folder another user owns could hand our socket to them, so it is never used.
 */
export function securePrivateFolder(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new McpError('unavailable', `cannot create the pool daemon's folder ${dir}: ${(error as Error).message}`, { cause: error });
  }
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new McpError('unavailable', `the pool daemon's folder ${dir} is not a folder (a symlink or a file); refusing to use it`, {});
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new McpError('unavailable', `the pool daemon's folder ${dir} belongs to user ${stat.uid}, not to this user (${uid}); refusing to use it`, {});
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** The version as a file name: two versions never share one (a version with other characters gets a hash of itself). */
function versionTag(version: string): string {
  const safe = version.replace(/[^A-Za-z0-9.+-]/g, '_').slice(0, 40);
  return safe === version ? safe : `${safe}~${createHash('sha256').update(version).digest('hex').slice(0, 8)}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
