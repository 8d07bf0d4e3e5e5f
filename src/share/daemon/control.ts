import { setTimeout as sleep } from 'node:timers/promises';
import { packageVersion } from '../../cli/environment.js';
import { McpError } from '../../errors.js';
import { signalGroup } from '../../transport/stdio/process-group.js';
import { hello } from './hello.js';
import { alive } from './lock.js';
import { daemonPaths, type SharedOptions } from './paths.js';
import { connectSocket } from './probe.js';
import { SocketChannel } from './socket-channel.js';
import { CONTROL_METHOD, type ControlParams, type DaemonStatus, WIRE_VERSION } from './wire.js';

const CONTROL_TIMEOUT_MS = 5000;

/** The running daemon's status; undefined when none runs (nothing is started). */
export async function daemonStatus(options: SharedOptions = {}): Promise<DaemonStatus | undefined> {
  return control<DaemonStatus>('status', options);
}

/**
 * Stops the running daemon gracefully (its servers get their grace), bounded: a daemon
 * still alive after `timeoutMs` is killed, and its servers with it (the reaper's
 * guarantee). Resolves with the pid it stopped, undefined when none ran.
 */
export async function stopDaemon(options: SharedOptions = {}, timeoutMs = 10_000): Promise<number | undefined> {
  const status = await daemonStatus(options);
  if (!status) return undefined;
  await control('stop', options);
  const deadline = Date.now() + timeoutMs;
  while (alive(status.pid) && Date.now() < deadline) await sleep(25);
  if (alive(status.pid)) {
    signalGroup(status.pid, 'SIGKILL');
    try {
      process.kill(status.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return status.pid;
}

async function control<T>(op: ControlParams['op'], options: SharedOptions): Promise<T | undefined> {
  const version = options.version ?? packageVersion();
  const paths = daemonPaths(options, version);
  let socket;
  try {
    socket = await connectSocket(paths.socket);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ECONNREFUSED') return undefined;
    throw error instanceof McpError ? error : new McpError('unavailable', `cannot reach the pool daemon at ${paths.socket}: ${(error as Error).message}`, {});
  }
  const channel = new SocketChannel(socket, { lost: () => new McpError('unavailable', 'the pool daemon closed the connection', {}) });
  try {
    const params: ControlParams = { wire: WIRE_VERSION, version, op };
    return await hello<T>(channel, CONTROL_METHOD, params, CONTROL_TIMEOUT_MS);
  } finally {
    await channel.close();
  }
}
