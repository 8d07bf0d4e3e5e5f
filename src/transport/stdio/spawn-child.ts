import type { execa as Execa } from 'execa';
import { McpError, serverLabel } from '../../errors.js';
import { safeEnvironment } from './child-env.js';
import { DEFAULT_SANDBOX, type SandboxOptions, type SandboxPolicy } from './sandbox/policy.js';
import { mustBe } from '../../util/check.js';

/** How to start one server process. */
export interface ProcessSpec {
  /** Labels errors: `server "fs": …`. */
  name?: string;
  /** The program; looked up on the child's PATH. No shell is involved. */
  command: string;
  /** Passed as given, no quoting or expansion. Default none. */
  args?: readonly string[];
  /** The server's own variables, on top of the safe host variables. */
  env?: Record<string, string>;
  /** Working directory. Default the host's. */
  cwd?: string;
  /** Pass the host's whole environment instead of the safe allow-list. Default false. */
  inheritEnv?: boolean;
  /** Lines of stderr kept. Default 50. */
  stderrTailLines?: number;
  /** Bytes of stderr kept at most (each line is also cut to 4096 characters). Default 16384. */
  stderrTailBytes?: number;
  /**
   * Run the server in a sandbox that shows it only the system, its own package and the
   * listed paths (absolute); `true` for none. Where no sandbox can be made the spawn
   * fails `sandbox-unavailable`; it never runs unsandboxed.
   */
  sandbox?: SandboxOptions;
}

/** A {@link ProcessSpec} with defaults filled in and values checked. */
export interface ResolvedSpec {
  name: string | undefined;
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
  inheritEnv: boolean;
  stderrTailLines: number;
  stderrTailBytes: number;
  sandbox: SandboxPolicy | undefined;
}

/** Fills defaults and checks types; throws `invalid-config` naming the field and the value. */
export function resolveSpec(spec: ProcessSpec): ResolvedSpec {
  const fail = (field: string, expected: string, value: unknown): never => {
    throw new McpError(
      'invalid-config',
      `${serverLabel(spec.name)}${mustBe(field, expected, value)}`,
      { server: spec.name, phase: 'config' },
    );
  };
  const { command, args = [], env = {}, cwd, inheritEnv = false, stderrTailLines = 50, stderrTailBytes = 16384, sandbox } = spec;
  if (typeof command !== 'string' || command === '') fail('command', 'a non-empty string', command);
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) fail('args', 'an array of strings', args);
  if (typeof env !== 'object' || env === null || !Object.values(env).every((v) => typeof v === 'string')) {
    fail('env', 'an object of strings', env);
  }
  if (cwd !== undefined && typeof cwd !== 'string') fail('cwd', 'a string', cwd);
  if (typeof inheritEnv !== 'boolean') fail('inheritEnv', 'a boolean', inheritEnv);
  if (!Number.isSafeInteger(stderrTailLines) || stderrTailLines < 0) fail('stderrTailLines', 'a non-negative integer', stderrTailLines);
  if (!Number.isSafeInteger(stderrTailBytes) || stderrTailBytes < 0) fail('stderrTailBytes', 'a non-negative integer', stderrTailBytes);
  let policy: SandboxPolicy | undefined;
  if (sandbox !== undefined && sandbox !== false) {
    const problem = sandboxProblem(sandbox);
    if (problem) fail(`sandbox${problem.field}`, problem.expected, problem.value);
    // The whole host environment would carry every token into the sandbox.
    if (inheritEnv) fail('inheritEnv', 'false with a sandbox (list the variables the server needs in sandbox.env)', inheritEnv);
    policy = sandbox === true ? DEFAULT_SANDBOX : { ...DEFAULT_SANDBOX, ...sandbox };
  }
  return { name: spec.name, command, args, env, cwd, inheritEnv, stderrTailLines, stderrTailBytes, sandbox: policy };
}

/** What is wrong with a sandbox policy given to the API directly (the config checks its own). */
function sandboxProblem(sandbox: SandboxOptions): { field: string; expected: string; value: unknown } | undefined {
  if (sandbox === true) return undefined;
  if (typeof sandbox !== 'object' || sandbox === null) return { field: '', expected: 'true or an object { read?, write?, network?, env? }', value: sandbox };
  for (const field of ['read', 'write', 'env'] as const) {
    const list: unknown = sandbox[field];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) return { field: `.${field}`, expected: 'an array of strings', value: list };
    if (field !== 'env') {
      const relative = list.find((path: string) => !path.startsWith('/'));
      if (relative !== undefined) return { field: `.${field}`, expected: 'a list of absolute paths', value: relative };
    }
  }
  if (sandbox.network !== undefined && typeof sandbox.network !== 'boolean') return { field: '.network', expected: 'a boolean', value: sandbox.network };
  return undefined;
}

/** The command line that starts a server: its own, or a sandbox tool's around it. */
export interface Launch {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
  /** Whether fd 3 is a pipe the sandbox tool reports on. */
  infoFd: boolean;
}

/** The plain command line of an unsandboxed server. */
export function directLaunch(spec: ResolvedSpec): Launch {
  return { command: spec.command, args: [...spec.args], env: safeEnvironment(spec.env, spec.inheritEnv), cwd: spec.cwd, infoFd: false };
}

let execa: typeof Execa | undefined;

/**
 * Loads execa, the largest module a start needs (about a third of the package's import
 * when loaded eagerly): a process that never spawns never pays for it. Call before
 * {@link startChild}; later calls cost a resolved promise.
 */
export async function loadSpawner(): Promise<void> {
  execa ??= (await import('execa')).execa;
}

/**
 * Starts the child ({@link loadSpawner} first). Every option that could end or buffer it is off: the
 * ServerProcess alone owns its lifetime, and a long-lived server's output must not
 * pile up in memory. stdout stays the raw pipe (Buffers, no decoding, no splitting).
 */
export function startChild(launch: Launch) {
  if (execa === undefined) throw new Error('startChild before loadSpawner');
  const child = execa(launch.command, launch.args, {
    // Never undefined (execa's default made explicit): the declaration emitted from this holds under a consumer's exactOptionalPropertyTypes.
    cwd: launch.cwd ?? process.cwd(),
    env: launch.env,
    extendEnv: false,
    // A sandbox tool reports on fd 3 (see SandboxLaunch.infoFd).
    stdio: launch.infoFd ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    buffer: false,
    encoding: 'buffer',
    lines: false,
    stripFinalNewline: false,
    reject: false,
    cleanup: false,
    forceKillAfterDelay: false,
    detached: true, // its own process group, so close() can signal everything it starts
    windowsHide: true,
    shell: false,
    preferLocal: false,
    ipc: false,
    // NODE_DEBUG=execa would otherwise turn on a verbose mode that reads stdout line by line too.
    verbose: 'none',
  });
  // With `reject: false` it should never reject; make sure a surprise is never unhandled.
  child.catch(() => {});
  return child;
}

export type Child = ReturnType<typeof startChild>;

/** Resolves on the OS's 'spawn', rejects with the reason it could not start. */
export function spawned(child: Child): Promise<void> {
  return new Promise((resolve, reject) => {
    const onSpawn = () => {
      child.off('error', onError);
      resolve();
    };
    const onError = (error: unknown) => {
      child.off('spawn', onSpawn);
      reject(error);
    };
    child.once('spawn', onSpawn);
    child.once('error', onError);
    // When spawn() throws synchronously, execa returns a stand-in that never emits; only its result tells why.
    if (child.pid === undefined) child.then((result) => onError('cause' in result ? result.cause : result), onError);
  });
}

/** The `spawn-failed` error for `spec`, with a reason people can act on. */
export function spawnFailed(spec: ResolvedSpec, error: unknown, reason = describeSpawnError(error)): McpError {
  if (error instanceof McpError) return error;
  return new McpError('spawn-failed', `${serverLabel(spec.name)}cannot start ${JSON.stringify(spec.command)}: ${reason}`, {
    server: spec.name,
    phase: 'spawn',
    cause: error,
  });
}

function describeSpawnError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'command not found (ENOENT); check that it is installed and on PATH';
  if (code === 'EACCES') return 'permission denied (EACCES); check that the file is executable';
  return error instanceof Error ? error.message : String(error);
}

