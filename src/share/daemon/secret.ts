import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { McpError } from '../../errors.js';

/** Longest secret file read: ours is 64 hex characters. */
const MAX_SECRET_BYTES = 256;

/**
 * The daemon's second lock on its door. The socket is 0600 in a 0700 folder of the
 * user's, so only the user's processes (and root) can connect; a client also proves it
 * can read the daemon's secret, a file only the user can read, written afresh by each
 * daemon before it listens. On Linux this stands for the peer uid check: Node exposes
 * neither `SO_PEERCRED` nor `getpeereid`, and finding the peer through /proc/net/unix
 * and /proc/<pid>/fd is a race (the peer may exit and its pid be reused, or pass the
 * descriptor on) that also costs a scan of every process per connection.
 */
export function writeSecret(path: string): string {
  const secret = randomBytes(32).toString('hex');
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, secret, { mode: 0o600, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new McpError('unavailable', `cannot write the pool daemon's secret ${path}: ${(error as Error).message}`, { cause: error });
  }
  return secret;
}

/**
 * The running daemon's secret, read only from a regular file (no symlink followed) that
 * is this user's and that no one else can read or write; anything else is refused.
 */
export function readSecret(path: string): string {
  const refuse = (why: string) => new McpError('unavailable', `the pool daemon's secret ${path} ${why}; refusing to use it (stop the daemon, or remove the file)`, {});
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refuse('is a symlink');
    throw new McpError('unavailable', `cannot read the pool daemon's secret ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw refuse('is not a regular file');
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) throw refuse(`belongs to user ${info.uid}, not to this user (${uid})`);
    if ((info.mode & 0o077) !== 0) throw refuse(`can be read or written by others (mode ${(info.mode & 0o777).toString(8)})`);
    const buffer = Buffer.alloc(MAX_SECRET_BYTES);
    const length = readSync(fd, buffer, 0, MAX_SECRET_BYTES, 0);
    return buffer.toString('utf8', 0, length).trim();
  } finally {
    closeSync(fd);
  }
}

/** Whether `given` is the secret, in time that does not depend on where they differ (nor on `given`'s length). */
export function isSecret(secret: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(secret), digest(given)) && secret.length > 0;
}
