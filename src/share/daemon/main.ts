// The pool daemon's process: `node main.js --runtime-dir DIR --version V --idle-ms N --log FILE`,
// spawned detached by the first client (see attach.ts). Not a public entry point.
import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { PoolDaemon } from './daemon.js';
import { daemonPaths, idleTimeout, securePrivateFolder } from './paths.js';

/** A log past this size is moved aside (one old copy kept) when a daemon starts. */
const MAX_LOG_BYTES = 1_000_000;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { 'runtime-dir': { type: 'string' }, version: { type: 'string' }, 'idle-ms': { type: 'string' }, log: { type: 'string' } },
    strict: true,
  });
  const version = values.version;
  const runtimeDir = values['runtime-dir'];
  if (!version || !runtimeDir) throw new Error('usage: main.js --runtime-dir DIR --version V [--idle-ms N] [--log FILE]');
  const paths = daemonPaths({ runtimeDir, ...(values.log ? { logFile: values.log } : {}) }, version);
  securePrivateFolder(paths.dir);
  const log = openLog(paths.log);
  const idleTimeoutMs = idleTimeout(values['idle-ms'] === undefined ? {} : { idleTimeoutMs: Number(values['idle-ms']) });
  const daemon = await PoolDaemon.start({ paths, version, idleTimeoutMs, log });
  if (!daemon) {
    log(`another daemon already listens on ${paths.socket}; exiting`);
    return 0;
  }
  log(`started: lazy-mcp ${version}, pid ${process.pid}, socket ${paths.socket}, idle exit after ${idleTimeoutMs} ms`);
  const stop = (signal: string) => void daemon.stop(`signal ${signal}`);
  process.on('SIGTERM', stop).on('SIGINT', stop).on('SIGHUP', () => undefined);
  await daemon.closed;
  log('stopped');
  return 0;
}

function openLog(path: string): (line: string) => void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if ((statSync(path, { throwIfNoEntry: false })?.size ?? 0) > MAX_LOG_BYTES) renameSync(path, `${path}.1`);
  } catch {
    // A log that cannot be rotated is appended to.
  }
  return (line) => {
    try {
      appendFileSync(path, `${new Date().toISOString()} [${process.pid}] ${line}\n`, { mode: 0o600 });
    } catch {
      // No log is no reason to stop serving.
    }
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`lazy-mcp daemon: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
