import { basename } from 'node:path';
import { McpError } from '../../errors.js';

/** Commands that fetch a package before running it, by themselves … */
const RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'uvx']);
/** … and with a subcommand: `pnpm dlx`, `yarn dlx`, `npm exec`, `bun x`. */
const RUNNER_SUBCOMMANDS: Record<string, readonly string[]> = { pnpm: ['dlx'], yarn: ['dlx'], npm: ['exec', 'x'], bun: ['x'] };

/** The package runner a command line is (`npx`, `pnpm dlx`, …), or undefined. */
export function packageRunner(command: string, args: readonly string[] = []): string | undefined {
  // `C:\…\npx.cmd` is npx too.
  const name = basename(command.replace(/\\/g, '/')).replace(/\.(cmd|exe|ps1)$/i, '').toLowerCase();
  if (RUNNERS.has(name)) return name;
  const sub = args[0];
  return sub !== undefined && RUNNER_SUBCOMMANDS[name]?.includes(sub) ? `${name} ${sub}` : undefined;
}

/**
 * A start's time-out, told better when the server is run by a package runner and has
 * printed nothing: the runner is most likely still downloading (a first run, or offline
 * with the package not in its cache), which otherwise looks like a hung server.
 * Any other error is returned as it is.
 */
export function withDownloadHint(error: unknown, config: { command: string; args?: readonly string[] }, printedNothing: boolean): unknown {
  if (!(error instanceof McpError) || error.code !== 'timeout' || !printedNothing || (error.stderrTail?.length ?? 0) > 0) return error;
  const runner = packageRunner(config.command, config.args);
  if (runner === undefined) return error;
  const hint = `; it printed nothing: ${runner} may still be downloading the package (a first run, or offline without it in the cache); run the command once by hand, or raise the server's "timeout"`;
  if (error.message.endsWith(hint)) return error; // told once already
  const { server, phase, stderrTail } = error;
  return new McpError('timeout', `${error.message}${hint}`, { server, phase, stderrTail, cause: error.cause });
}

/**
 * A package runner that exited inside a sandbox without network, told why: it could
 * not download (lazy-mcp runs it offline there, so it fails at once instead of retrying
 * for minutes) and what the entry needs. Any other error is returned as it is.
 */
export function withSandboxHint(error: unknown, config: { command: string; args?: readonly string[]; sandbox?: { network: boolean } }): unknown {
  if (!(error instanceof McpError) || (error.code !== 'peer-exited' && error.code !== 'peer-eof') || !config.sandbox || config.sandbox.network) return error;
  const runner = packageRunner(config.command, config.args);
  if (runner === undefined) return error;
  const hint = `; ${runner} ran in a sandbox without network, so it could use only packages already in its cache: to let it download, set "sandbox": { "network": true, "write": ["~/.npm"] } (uv: "~/.cache/uv")`;
  if (error.message.endsWith(hint)) return error;
  const { server, phase, exitCode, signal, stderrTail } = error;
  return new McpError(error.code, `${error.message}${hint}`, { server, phase, exitCode, signal, stderrTail, cause: error.cause });
}
