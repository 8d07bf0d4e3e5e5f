#!/usr/bin/env node
// The `lazy-mcp` command. Results go to stdout, everything for people to stderr; the exit
// status is set (never process.exit()) so pending output is flushed.
import { EXIT, parseCommandLine, USAGE, UsageError } from './args.js';
import { packageVersion } from '../util/package-info.js';
import { errorRecord } from './reporter.js';

/** Runs one command line and resolves to the exit status. */
async function main(argv: readonly string[]): Promise<number> {
  // `serve` parses its own options: it is a long-running server, not a one-shot command.
  if (argv[0] === 'serve') return (await import('./serve.js')).serve(argv.slice(1));
  if (argv[0] === 'daemon') return (await import('./daemon.js')).daemon(argv.slice(1));
  let invocation;
  try {
    invocation = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // --json asks for errors as JSON too, even when the rest of the line could not be read.
    if (argv.includes('--json')) process.stderr.write(`${JSON.stringify({ error: errorRecord(error) })}\n`);
    else process.stderr.write(`lazy-mcp: ${error.message} (see lazy-mcp --help)\n`);
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
  // Loaded only now: help and usage errors answer without the runtime's load time.
  const { run } = await import('./run.js');
  return run(invocation.command, invocation.options);
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
