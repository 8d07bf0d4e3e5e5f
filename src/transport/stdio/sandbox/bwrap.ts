import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import type { SandboxPolicy } from './policy.js';
import { isSystem, isWithin, SYSTEM_PATHS } from './server-files.js';

/** Everything bwrap's command line is made from. */
export interface SandboxPlan {
  policy: SandboxPolicy;
  /** The server's own files (see serverFiles), shown read-only. */
  serverFiles: readonly string[];
  /** The server's home folder: private and empty inside, but for the listed paths under it. */
  home: string | undefined;
  /** Where the server starts; must be visible (see {@link visibleIn}). */
  cwd: string;
  command: string;
  args: readonly string[];
  /** Whether bwrap can make a user namespace here (see SandboxTool). */
  userNamespace: boolean;
  /** The fd bwrap writes `{"child-pid": N}` to, so the host can reach the sandbox's own process group. */
  infoFd?: number;
}

/** Files under /etc that hold secrets: shown as empty files. */
const SECRET_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/security/opasswd'];
/** Folders under /etc that hold keys and passwords: shown empty. */
const SECRET_FOLDERS = ['/etc/ssl/private', '/etc/sudoers.d', '/etc/letsencrypt', '/etc/NetworkManager/system-connections', '/etc/wireguard', '/etc/ipsec.d/private', '/etc/pki/tls/private'];

type Mount =
  | { kind: 'ro' | 'rw'; path: string }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'tmpfs' | 'proc' | 'dev' | 'hide-folder'; path: string }
  | { kind: 'hide-file'; path: string };

/**
 * bwrap's arguments for `plan`, up to and including the command. Mounts are made
 * parents first (a listed folder under the private home or /tmp lands on top of it);
 * at equal depth, in the order system, private folders, secrets hidden, the server's
 * files, read, write — so a path the entry lists explicitly wins over a default.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const { policy } = plan;
  const args = ['--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (plan.userNamespace) args.push('--unshare-user');
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-cgroup-try');
  if (!policy.network) args.push('--unshare-net');
  if (plan.infoFd !== undefined) args.push('--info-fd', String(plan.infoFd));
  const mounts = planMounts(plan);
  for (const mount of mounts) {
    switch (mount.kind) {
      case 'ro':
        args.push('--ro-bind', mount.path, mount.path);
        break;
      case 'rw':
        args.push('--bind', mount.path, mount.path);
        break;
      case 'symlink':
        args.push('--symlink', mount.target, mount.path);
        break;
      case 'tmpfs':
        args.push('--tmpfs', mount.path);
        break;
      case 'proc':
        args.push('--proc', mount.path);
        break;
      case 'dev':
        args.push('--dev', mount.path);
        break;
      case 'hide-file':
        args.push('--ro-bind', '/dev/null', mount.path);
        break;
      case 'hide-folder':
        args.push('--tmpfs', mount.path, '--remount-ro', mount.path);
        break;
    }
  }
  args.push('--chdir', plan.cwd, '--', plan.command, ...plan.args);
  return args;
}

/** Whether `path` can be seen inside the sandbox `plan` makes (a bound folder or the system). */
export function visibleIn(plan: Pick<SandboxPlan, 'policy' | 'serverFiles'>, path: string): boolean {
  return [...SYSTEM_PATHS, ...plan.serverFiles, ...plan.policy.read, ...plan.policy.write].some((folder) => isWithin(path, folder));
}

function planMounts(plan: SandboxPlan): Mount[] {
  const mounts: Mount[] = [];
  for (const path of SYSTEM_PATHS) {
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (info?.isSymbolicLink()) mounts.push({ kind: 'symlink', path, target: readlinkSync(path) });
    else if (info?.isDirectory()) mounts.push({ kind: 'ro', path });
  }
  if (plan.policy.network) {
    // /etc/resolv.conf often points into /run (systemd-resolved, NetworkManager).
    const resolver = realpathOrUndefined('/etc/resolv.conf');
    if (resolver !== undefined && !isSystem(resolver)) mounts.push({ kind: 'ro', path: dirname(resolver) });
  }
  mounts.push({ kind: 'proc', path: '/proc' }, { kind: 'dev', path: '/dev' }, { kind: 'tmpfs', path: '/tmp' });
  if (plan.home !== undefined && plan.home !== '/' && !isSystem(plan.home)) mounts.push({ kind: 'tmpfs', path: plan.home });
  for (const path of SECRET_FILES) if (existsSync(path)) mounts.push({ kind: 'hide-file', path });
  for (const path of hostKeys()) mounts.push({ kind: 'hide-file', path });
  for (const path of SECRET_FOLDERS) if (lstatSync(path, { throwIfNoEntry: false })?.isDirectory()) mounts.push({ kind: 'hide-folder', path });
  const bound = [...plan.serverFiles, ...plan.policy.read, ...plan.policy.write];
  const add = (kind: 'ro' | 'rw', path: string) => {
    // A link inside another shown folder is already there, and bwrap cannot mount onto it; its target is shown by itself.
    if (realpathOrUndefined(path) !== path && bound.some((other) => other !== path && isWithin(path, other))) return;
    mounts.push({ kind, path });
  };
  for (const path of plan.serverFiles) add('ro', path);
  for (const path of plan.policy.read) add('ro', path);
  for (const path of plan.policy.write) add('rw', path);
  return sortParentsFirst(mounts);
}

/** Stable: parents before children; at equal depth the insertion order stands. */
function sortParentsFirst(mounts: Mount[]): Mount[] {
  const depth = (path: string) => (path === '/' ? 0 : path.split(sep).length - 1);
  return mounts.map((mount, i) => ({ mount, i })).sort((a, b) => depth(a.mount.path) - depth(b.mount.path) || a.i - b.i).map(({ mount }) => mount);
}

/** sshd's private host keys. */
function hostKeys(): string[] {
  try {
    return readdirSync('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => join('/etc/ssh', name));
  } catch {
    return [];
  }
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
