import type { SandboxPolicy } from './policy.js';

/** What the macOS profile is made from. */
export interface MacosPlan {
  policy: SandboxPolicy;
  /** The server's own files (see serverFiles), readable. */
  serverFiles: readonly string[];
  /** A fresh folder of its own that the server gets as TMPDIR (macOS has no private /tmp). */
  tmpdir: string;
}

/** Read-only everywhere: what a program needs to load and run on macOS. */
const SYSTEM_READ = ['/usr', '/bin', '/sbin', '/System', '/Library', '/private/etc', '/private/var/db/timezone', '/dev', '/opt/homebrew', '/usr/local'];
/** Secrets under the system folders that stay hidden. */
const SECRETS = ['/private/etc/master.passwd', '/private/etc/sudoers', '/private/etc/sudoers.d', '/private/etc/ssh/ssh_host_ecdsa_key', '/private/etc/ssh/ssh_host_ed25519_key', '/private/etc/ssh/ssh_host_rsa_key'];

/**
 * The `sandbox-exec` profile (SBPL) for `plan`: deny by default; read the system, the
 * server's files and the read paths; write the write paths, the server's TMPDIR and
 * /dev/null-like devices; network only when allowed. macOS cannot hide the host's
 * processes as a pid namespace does, but the profile lets the server signal only
 * processes of its own sandbox. Written for macOS 12+; not run on a Mac by our tests.
 */
export function macosProfile(plan: MacosPlan): string {
  const { policy } = plan;
  const lines = [
    '(version 1)',
    '(deny default)',
    '(import "system.sb")',
    '(allow process-exec process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow ipc-posix-shm)',
    '(allow file-read-metadata)',
    `(allow file-read* (literal "/") ${[...SYSTEM_READ, ...plan.serverFiles, ...policy.read, ...policy.write, plan.tmpdir].map(subpath).join(' ')})`,
    `(deny file-read* ${SECRETS.map(subpath).join(' ')})`,
    `(allow file-write* (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/") ${[...policy.write, plan.tmpdir].map(subpath).join(' ')})`,
  ];
  if (policy.network) lines.push('(allow network*)', '(allow system-socket)');
  else lines.push('(allow network-outbound (remote unix-socket))');
  return `${lines.join('\n')}\n`;
}

/** `(subpath "…")`, the path quoted as SBPL strings are. */
function subpath(path: string): string {
  return `(subpath ${JSON.stringify(path)})`;
}

/** The `sandbox-exec` command line for a server. */
export function sandboxExecArgs(profile: string, command: string, args: readonly string[]): string[] {
  return ['-p', profile, '--', command, ...args];
}
