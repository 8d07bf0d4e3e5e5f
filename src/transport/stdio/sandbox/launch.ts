import { mkdtempSync, rmSync } from 'node:fs';
import type { Launch } from '../spawn-child.js';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bwrapArgs, visibleIn } from './bwrap.js';
import { macosProfile, sandboxExecArgs } from './macos.js';
import type { SandboxPolicy, SandboxStatus } from './policy.js';
import { CommandNotFound, serverFiles } from './server-files.js';
import { findSandboxTool } from './tool.js';

/** The fd bwrap reports the sandbox's first process on (stdin, stdout, stderr come first). */
export const INFO_FD = 3;

/** How to start a sandboxed server: the sandbox tool's command line, wrapping the server's. */
export interface SandboxLaunch extends Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The host-side working directory of the sandbox tool (the server's own is set inside). */
  cwd: string;
  /** Whether fd {@link INFO_FD} carries bwrap's `{"child-pid": N}`. */
  infoFd: boolean;
  status: SandboxStatus;
  /** Removes what the launch made on the host (macOS: the server's TMPDIR). Idempotent. */
  cleanup(): void;
}

/** Why a sandbox cannot be made for this server: the spawn fails with this reason. */
export class SandboxSetupError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface SandboxedServer {
  name: string | undefined;
  command: string;
  args: readonly string[];
  /** The server's environment, as it would start without a sandbox. */
  env: Record<string, string>;
  cwd: string | undefined;
  policy: SandboxPolicy;
}

/**
 * The command line that runs `server` inside its sandbox. Throws `sandbox-unavailable`
 * (no tool here) or {@link SandboxSetupError} (a listed path is missing, the working
 * directory is hidden, the command is not found).
 */
export async function sandboxLaunch(server: SandboxedServer, hostPath = process.env.PATH ?? ''): Promise<SandboxLaunch> {
  const tool = findSandboxTool(server.name, hostPath);
  const { policy } = server;
  for (const [field, paths] of [['read', policy.read], ['write', policy.write]] as const) {
    for (const path of paths) {
      if (!(await stat(path).catch(() => undefined))) throw new SandboxSetupError(`sandbox.${field} path ${JSON.stringify(path)} does not exist; create it first`, 'ENOENT');
    }
  }
  const hostCwd = resolve(server.cwd ?? process.cwd());
  const env = { ...server.env };
  if (!policy.network) {
    // Without a network a package runner would retry its downloads for minutes; offline it fails at once, saying what is not cached.
    env.npm_config_offline ??= 'true';
    env.UV_OFFLINE ??= '1';
  }
  let files;
  try {
    files = await serverFiles(server.command, server.args, hostCwd, env.PATH ?? '', env.HOME);
  } catch (error) {
    if (error instanceof CommandNotFound) throw new SandboxSetupError('command not found (ENOENT); check that it is installed and on PATH', 'ENOENT');
    throw new SandboxSetupError(`cannot tell what the sandbox must show: ${(error as Error).message}`, (error as { code?: string }).code);
  }
  const status: SandboxStatus = { tool: tool.kind, read: [...policy.read], write: [...policy.write], network: policy.network, env: [...policy.env] };
  if (tool.kind === 'sandbox-exec') {
    const tmp = mkdtempSync(join(tmpdir(), 'lazy-mcp-sandbox-'));
    const profile = macosProfile({ policy, serverFiles: files.read, tmpdir: tmp });
    return {
      command: tool.path,
      args: sandboxExecArgs(profile, files.command, server.args),
      env: { ...env, TMPDIR: tmp },
      cwd: hostCwd,
      infoFd: false,
      status,
      cleanup: () => rmSync(tmp, { recursive: true, force: true }),
    };
  }
  const plan = { policy, serverFiles: files.read, home: env.HOME, command: files.command, args: server.args, userNamespace: tool.userNamespace, infoFd: INFO_FD };
  let cwd = hostCwd;
  if (!visibleIn(plan, hostCwd)) {
    if (server.cwd !== undefined) {
      throw new SandboxSetupError(`working directory ${JSON.stringify(hostCwd)} is not visible in the sandbox; add it to sandbox.read or sandbox.write`);
    }
    cwd = '/'; // the host's own cwd was never the server's business
  }
  return {
    command: tool.path,
    args: bwrapArgs({ ...plan, cwd }),
    env: { ...env, TMPDIR: '/tmp' },
    cwd: '/',
    infoFd: true,
    status,
    cleanup: () => {},
  };
}
