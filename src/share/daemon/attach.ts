import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageRoot, packageVersion } from '../../util/package-info.js';
import { McpError, serverLabel } from '../../errors.js';
import { safeEnvironment } from '../../transport/stdio/child-env.js';
import { hello } from './hello.js';
import { withLock } from './lock.js';
import { type DaemonPaths, daemonPaths, idleTimeout, securePrivateFolder, type SharedOptions } from './paths.js';
import { connectSocket } from './probe.js';
import { readSecret } from './secret.js';
import { SocketChannel } from './socket-channel.js';
import { ATTACH_METHOD, type AttachParams, type AttachResult, type SharedSpec, WIRE_VERSION } from './wire.js';

export interface AttachRequest {
  /** The client's name for the server. */
  name: string;
  spec: SharedSpec;
  /** The server's start time-out (its handshake), in ms. Default 30000. */
  timeout?: number;
  maxMessageBytes?: number;
  signal?: AbortSignal;
}

/** Longest wait for a daemon just spawned to accept connections. */
const DAEMON_READY_MS = 10_000;
/** What the daemon adds to a server's start for the attach's answer (its own start, queueing). */
const ATTACH_SLACK_MS = 5_000;

/** The daemon's entry point, in the built package (also when this module runs from `src/` under a test runner). */
export const daemonMain = join(packageRoot, 'dist', 'share', 'daemon', 'main.js');

/**
 * A channel to the shared process of `request.spec`, through the user's pool daemon,
 * which is started when none answers (one daemon however many clients start at once:
 * the start is done under a lock, and the daemon binds its socket under another). The
 * channel carries plain MCP from here on; `info.pid` is the shared server's pid. When
 * the daemon goes away the channel ends `unavailable`.
 */
export async function attachShared(request: AttachRequest, options: SharedOptions = {}): Promise<SocketChannel> {
  const version = options.version ?? packageVersion();
  const paths = daemonPaths(options, version);
  securePrivateFolder(paths.dir);
  const socket = await connectOrStart(paths, options, version);
  const label = serverLabel(request.name);
  const channel = new SocketChannel(socket, {
    name: request.name,
    ...(request.maxMessageBytes === undefined ? {} : { maxMessageBytes: request.maxMessageBytes }),
    lost: () => new McpError('unavailable', `${label}the pool daemon went away; the next call starts a new one`, { server: request.name }),
  });
  let secret: string;
  try {
    secret = readSecret(paths.secret);
  } catch (error) {
    await channel.close();
    throw error;
  }
  const params: AttachParams = {
    wire: WIRE_VERSION,
    version,
    secret,
    pid: process.pid,
    name: request.name,
    spec: request.spec,
    ...(request.timeout === undefined ? {} : { timeout: request.timeout }),
    ...(request.maxMessageBytes === undefined ? {} : { maxMessageBytes: request.maxMessageBytes }),
  };
  const result = await hello<AttachResult>(channel, ATTACH_METHOD, params, (request.timeout ?? 30_000) + ATTACH_SLACK_MS, request.name, request.signal);
  if (result?.version !== version) {
    await channel.close();
    throw new McpError('unavailable', `${label}the pool daemon at ${paths.socket} is lazy-mcp ${String(result?.version)}, this client is ${version}; stop it with "lazy-mcp daemon stop"`, { server: request.name });
  }
  channel.info.pid = result.serverPid > 0 ? result.serverPid : undefined;
  if (result.era === 'legacy') channel.info.preferredEra = 'legacy';
  return channel;
}

/** A connection to the running daemon, starting one first if none answers. */
async function connectOrStart(paths: DaemonPaths, options: SharedOptions, version: string): Promise<Socket> {
  try {
    return await connectSocket(paths.socket);
  } catch (error) {
    if (!notListening(error)) throw unreachable(paths, error);
  }
  return withLock(paths.startLock, async () => {
    // Another client may have started it while this one waited for the lock.
    try {
      return await connectSocket(paths.socket);
    } catch (error) {
      if (!notListening(error)) throw unreachable(paths, error);
    }
    return startDaemon(paths, options, version);
  });
}

/** Spawns a detached daemon and waits (bounded) until it accepts a connection. */
async function startDaemon(paths: DaemonPaths, options: SharedOptions, version: string): Promise<Socket> {
  if (!existsSync(daemonMain)) throw new McpError('unavailable', `cannot start the pool daemon: ${daemonMain} is missing (is the package built?)`, {});
  const args = [daemonMain, '--runtime-dir', paths.dir, '--version', version, '--idle-ms', String(idleTimeout(options)), '--log', paths.log];
  const child = spawn(process.execPath, args, {
    detached: true, // its own session: it outlives this client and its signals
    stdio: 'ignore',
    // Nothing of the client's but what a program needs: servers get their env from each attach.
    env: safeEnvironment(),
    cwd: paths.dir,
    windowsHide: true,
  });
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = signal ?? `code ${code}`));
  child.once('error', (error) => (exited = error.message));
  child.unref();
  const deadline = Date.now() + DAEMON_READY_MS;
  for (;;) {
    try {
      return await connectSocket(paths.socket);
    } catch (error) {
      if (!notListening(error)) throw unreachable(paths, error);
    }
    if (exited !== undefined || Date.now() > deadline) {
      const why = exited === undefined ? `did not listen within ${DAEMON_READY_MS} ms` : `exited (${exited})`;
      throw new McpError('unavailable', `the pool daemon ${why}${logTail(paths.log)}`, {});
    }
    await sleep(20);
  }
}

function notListening(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

function unreachable(paths: DaemonPaths, error: unknown): McpError {
  return error instanceof McpError ? error : new McpError('unavailable', `cannot reach the pool daemon at ${paths.socket}: ${(error as Error).message}`, { cause: error });
}

/** The log's last lines, which say why a daemon could not start. */
function logTail(log: string): string {
  try {
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-3);
    return lines.length > 0 && lines[0] !== '' ? ` (log ${log}: ${lines.join(' | ')})` : '';
  } catch {
    return '';
  }
}
