import { delimiter, join } from 'node:path';
import { McpError, serverLabel } from '../../../errors.js';
import { fs, nodeChildProcess } from '../../../util/lazy-builtins.js';

/** The program that makes the sandbox on this machine, and what it can do here. */
export type SandboxTool =
  | {
      kind: 'bwrap';
      path: string;
      /**
       * Whether bwrap can make a user namespace here. Without one (a container that forbids
       * them) bwrap still isolates when it runs as root or setuid: the other namespaces,
       * the mounts and the dropped capabilities are the same.
       */
      userNamespace: boolean;
    }
  | { kind: 'sandbox-exec'; path: string };

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

const INSTALL_BWRAP =
  'install bubblewrap: `sudo apt-get install bubblewrap` (Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch), `sudo apk add bubblewrap` (Alpine)';

/** The namespaces every sandbox needs; the probe runs them for real, once per bwrap. */
const PROBE = ['--cap-drop', 'ALL', '--unshare-pid', '--unshare-ipc', '--unshare-net', '--die-with-parent', '--new-session', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--', 'true'];
const PROBE_TIMEOUT_MS = 10_000;

const probed = new Map<string, SandboxTool | string>();

/**
 * The sandbox tool for this machine, or a `sandbox-unavailable` error saying what is
 * missing and how to get it. bwrap is looked up on `pathEnv` and tried once (cached):
 * with a user namespace first, then without one.
 */
export function findSandboxTool(server?: string, pathEnv = process.env.PATH ?? '', platform: NodeJS.Platform = process.platform): SandboxTool {
  const found = lookUp(pathEnv, platform);
  if (typeof found === 'string') {
    throw new McpError('sandbox-unavailable', `${serverLabel(server)}cannot run the server sandboxed: ${found}; a sandboxed server is never run without its sandbox`, {
      server,
      phase: 'config',
    });
  }
  return found;
}

function lookUp(pathEnv: string, platform: NodeJS.Platform): SandboxTool | string {
  if (platform === 'darwin') {
    return isExecutable(SANDBOX_EXEC) ? { kind: 'sandbox-exec', path: SANDBOX_EXEC } : `${SANDBOX_EXEC} is missing (it ships with macOS)`;
  }
  if (platform !== 'linux') return `there is no sandbox tool for ${platform} (Linux uses bubblewrap, macOS sandbox-exec); run it in a container or WSL instead`;
  const bwrap = onPath('bwrap', pathEnv);
  if (bwrap === undefined) return `bubblewrap (\`bwrap\`) is not on PATH; ${INSTALL_BWRAP}`;
  let result = probed.get(bwrap);
  if (result === undefined) {
    result = probe(bwrap);
    probed.set(bwrap, result);
  }
  return result;
}

function probe(bwrap: string): SandboxTool | string {
  const run = (extra: string[]) => nodeChildProcess().spawnSync(bwrap, [...extra, ...PROBE], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const withUser = run(['--unshare-user']);
  if (withUser.status === 0) return { kind: 'bwrap', path: bwrap, userNamespace: true };
  const without = run([]);
  if (without.status === 0) return { kind: 'bwrap', path: bwrap, userNamespace: false };
  const why = (without.stderr || withUser.stderr || String(without.error ?? withUser.error ?? `exit ${without.status}`)).trim().split('\n')[0];
  return (
    `${bwrap} cannot create its namespaces here (${why}); allow unprivileged user namespaces (\`sysctl kernel.unprivileged_userns_clone=1\`, or on Ubuntu 24.04+ an AppArmor profile for bwrap), or in a container run with --privileged or a seccomp profile that permits them`
  );
}

function onPath(name: string, pathEnv: string): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir.startsWith('/')) continue; // a relative PATH entry would depend on the cwd: never trusted for this
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The tool a sandbox is made with on this platform. */
export function sandboxToolName(platform: NodeJS.Platform = process.platform): 'bwrap' | 'sandbox-exec' {
  return platform === 'darwin' ? 'sandbox-exec' : 'bwrap';
}

/** Forgets the probes (tests that change the machine's tools). */
export function forgetSandboxProbes(): void {
  probed.clear();
}
