#!/usr/bin/env node
// The `lazy-mcp` command. Results go to stdout, everything for people to stderr; the
// manager is always shut down before the process ends, and the exit status is set
// (never process.exit()) so pending output is flushed.
import { McpError, McpServerManager } from '../index.js';
import { parseCommandLine, USAGE, UsageError } from './args.js';
import { runCommand } from './commands.js';
import { packageVersion, prepareEnvironment, resolveConfigPath } from './environment.js';
import { Reporter } from './reporter.js';

/** Exit statuses: 0 ok, 1 a tool or server error, 2 a usage or config error. */
const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Signals that end the command gracefully: the call is cancelled and the servers stopped. */
const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;

/** Runs one command line and resolves to the exit status. */
async function main(argv: readonly string[]): Promise<number> {
  const reporter = (verbose: boolean) => new Reporter(process.stderr, { progress: Boolean(process.stderr.isTTY) || verbose, verbose });
  let invocation;
  try {
    invocation = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    reporter(false).line(`lazy-mcp: ${error.message} (see lazy-mcp --help)`);
    return EXIT.usage;
  }
  if (invocation.action === 'help') {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  if (invocation.action === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT.ok;
  }

  const { command, options } = invocation;
  const report = reporter(options.verbose);
  prepareEnvironment();
  const configPath = resolveConfigPath(options.config);
  if (options.verbose) report.line(`lazy-mcp: using config ${configPath}`);
  let manager: McpServerManager;
  try {
    manager = McpServerManager.fromFile(configPath, {
      clientInfo: { name: 'lazy-mcp', version: packageVersion() },
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
    });
  } catch (error) {
    report.error(error);
    return EXIT.usage;
  }
  report.attach(manager);

  const abort = new AbortController();
  let interrupted: number | undefined;
  const onSignal = (signal: keyof typeof SIGNALS) => {
    interrupted = SIGNALS[signal];
    abort.abort();
    void manager.shutdown();
  };
  const listeners = Object.keys(SIGNALS).map((signal) => {
    const listener = () => onSignal(signal as keyof typeof SIGNALS);
    // Once: a second Ctrl-C falls through to the default (and the manager's exit hook kills the servers).
    process.once(signal, listener);
    return [signal, listener] as const;
  });

  try {
    return await runCommand(command, {
      manager,
      reporter: report,
      print: (text) => process.stdout.write(`${text}\n`),
      json: options.json,
      ...(process.stdout.isTTY ? { width: process.stdout.columns } : {}),
      signal: abort.signal,
    });
  } catch (error) {
    if (interrupted !== undefined) {
      report.line('lazy-mcp: interrupted');
      return interrupted;
    }
    report.error(error);
    return error instanceof UsageError || (error instanceof McpError && error.code === 'invalid-config') ? EXIT.usage : EXIT.failed;
  } finally {
    await manager.shutdown();
    for (const [signal, listener] of listeners) process.off(signal, listener);
  }
}

// A reader that goes away (`lazy-mcp tools | head -1`) is not an error of ours.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A bug of ours, not a user error: show all of it.
    console.error(error);
    process.exitCode = EXIT.failed;
  },
);
