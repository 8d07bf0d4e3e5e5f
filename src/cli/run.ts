import { McpError, McpServerManager } from '../index.js';
import { type Command, EXIT, type GlobalOptions, UsageError } from './args.js';
import { runCommand } from './commands.js';
import { coloursFor } from './colour.js';
import { chooseConfig, managerFor } from './config-choice.js';
import { prepareEnvironment } from './environment.js';
import { packageVersion } from '../util/package-info.js';
import { Reporter } from './reporter.js';

/** Signals that end a command gracefully, with their exit statuses: the request is cancelled and the servers stopped. */
const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
type HandledSignal = keyof typeof SIGNALS;

/**
 * Runs one command on a manager built from the config, and resolves to the exit status.
 * The manager is always shut down before this resolves, so no server outlives the command.
 */
export async function run(command: Command, options: GlobalOptions): Promise<number> {
  const report = new Reporter(process.stderr, {
    progress: Boolean(process.stderr.isTTY) || options.verbose,
    verbose: options.verbose,
    json: options.json,
    colour: coloursFor(process.stderr),
  });
  prepareEnvironment();
  let manager: McpServerManager;
  try {
    const chosen = chooseConfig(options);
    if (options.verbose) report.line(`lazy-mcp: using config ${chosen.file.path}${chosen.origin === '--config' ? '' : ` (${chosen.origin})`}`);
    manager = managerFor(chosen, {
      clientInfo: { name: 'lazy-mcp', version: packageVersion() },
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
      // A live view follows config edits.
      watch: command.name === 'status' && command.watch !== undefined,
    });
  } catch (error) {
    report.error(error);
    return EXIT.usage;
  }
  report.attach(manager);

  const abort = new AbortController();
  let interrupted: number | undefined;
  const onSignal = (signal: HandledSignal) => {
    if (interrupted !== undefined) {
      // A second Ctrl-C: stop waiting. Our listener goes, the signal's default action
      // returns, and the manager's exit hook kills the servers as the process ends.
      removeListeners();
      process.kill(process.pid, signal);
      return;
    }
    interrupted = SIGNALS[signal];
    abort.abort();
    void manager.shutdown();
  };
  // `on`, not `once`: while ours is attached, the manager's exit hook leaves the signal to us.
  const listeners = (Object.keys(SIGNALS) as HandledSignal[]).map((signal) => [signal, () => onSignal(signal)] as const);
  const removeListeners = () => listeners.forEach(([signal, listener]) => process.off(signal, listener));
  listeners.forEach(([signal, listener]) => process.on(signal, listener));

  try {
    return await runCommand(command, {
      manager,
      reporter: report,
      print: (text) => process.stdout.write(`${text}\n`),
      json: options.json,
      // A pseudo-terminal may report no width (0); then lines are left whole.
      ...(process.stdout.isTTY && process.stdout.columns > 0 ? { width: process.stdout.columns } : {}),
      colour: coloursFor(process.stdout),
      signal: abort.signal,
    });
  } catch (error) {
    if (interrupted !== undefined) {
      if (options.json) report.error(new McpError('cancelled', 'interrupted'));
      else report.line('lazy-mcp: interrupted');
      return interrupted;
    }
    report.error(error);
    return exitStatusOf(error);
  } finally {
    await manager.shutdown();
    removeListeners();
  }
}

/** Codes that say the command line or the config is wrong, not that a server or tool failed. */
const USAGE_CODES: ReadonlySet<string> = new Set(['invalid-config', 'unknown-server', 'unknown-tool', 'invalid-arguments']);

/** 2 for a usage or config error (a name that does not exist included), else 1. */
function exitStatusOf(error: unknown): number {
  return error instanceof UsageError || (error instanceof McpError && USAGE_CODES.has(error.code)) ? EXIT.usage : EXIT.failed;
}
