import type { McpServerManager, ManagerEvents, Progress } from '../index.js';
// Not from index.js: main.ts reports usage errors with errorRecord before the runtime is loaded.
import { McpError } from '../errors.js';
import { type Colours, plain } from './colour.js';
import { oneLine } from './format.js';

/** Where the reporter writes: stderr, or a fake stream in tests. */
interface TextSink {
  write(text: string): unknown;
}

interface ReporterOptions {
  /** Show servers starting ("starting fs… ready in 84 ms") and call progress. */
  progress: boolean;
  /** Stream server stderr and log messages; show stacks and error details. */
  verbose: boolean;
  /** `--json`: errors and warnings as one JSON object a line (`{"error": {code, message, …}}`). */
  json?: boolean;
  /** Styles for the `lazy-mcp:` prefix of errors and warnings. Default plain. */
  colour?: Colours;
}

/** An error as one JSON-able record: `McpError` fields where known; a usage error is `usage`. */
export function errorRecord(error: unknown): Record<string, unknown> {
  const message = oneLine(error instanceof Error ? error.message : String(error));
  if (!(error instanceof McpError)) return { code: error instanceof Error && error.name === 'UsageError' ? 'usage' : 'internal', message };
  const { code, server, phase, exitCode, signal, stderrTail } = error;
  return { code, message, ...(server === undefined ? {} : { server }), ...(phase === undefined ? {} : { phase }), ...(exitCode === undefined ? {} : { exitCode }), ...(signal === undefined ? {} : { signal }), ...(stderrTail?.length ? { stderrTail } : {}) };
}

/**
 * Everything the CLI tells a person goes through here, to stderr, so stdout carries
 * only results. It keeps one line "open" while a single server starts, so the common
 * case reads `starting fs… ready in 84 ms`; any other output closes that line first.
 */
export class Reporter {
  private open: string | undefined;
  private readonly startedAt = new Map<string, number>();

  private readonly colour: Colours;

  constructor(
    private readonly sink: TextSink,
    private readonly options: ReporterOptions,
  ) {
    this.colour = options.colour ?? plain;
  }

  /** Subscribes to what the options ask for. */
  attach(manager: McpServerManager): void {
    if (this.options.progress) manager.on('stateChange', (event) => this.stateChanged(event));
    if (this.options.verbose) {
      manager.on('stderr', ({ server, line }) => this.line(`[${server}] ${line}`));
      manager.on('log', ({ server, level, logger, data }) =>
        this.line(`[${server || 'lazy-mcp'}] ${level}${logger ? ` (${logger})` : ''}: ${typeof data === 'string' ? data : JSON.stringify(data)}`),
      );
    }
  }

  /** A start begins or ends: time it, and say so. */
  stateChanged({ server, from, to }: ManagerEvents['stateChange']): void {
    if (to === 'starting') {
      this.startedAt.set(server, performance.now());
      this.finishOpenLine();
      this.sink.write(`starting ${server}…`);
      this.open = server;
      return;
    }
    const began = this.startedAt.get(server);
    if (from !== 'starting' || began === undefined) return;
    this.startedAt.delete(server);
    const ms = Math.round(performance.now() - began);
    const outcome = to === 'ready' ? `ready in ${ms} ms` : `${to === 'closed' ? 'stopped' : 'failed'} after ${ms} ms`;
    if (this.open === server) {
      this.sink.write(` ${outcome}\n`);
      this.open = undefined;
    } else {
      this.line(`${server} ${outcome}`);
    }
  }

  /** A call's progress notification. */
  progress(tool: string, { progress, total, message }: Progress): void {
    if (this.options.progress) this.line(`${tool}: ${progress}${total === undefined ? '' : `/${total}`}${message ? ` ${message}` : ''}`);
  }

  /** Something the reader should know that is neither a warning nor an error. */
  note(message: string): void {
    if (this.options.json) this.line(JSON.stringify({ note: oneLine(message) }));
    else this.line(`lazy-mcp: ${oneLine(message)}`);
  }

  warn(message: string): void {
    if (this.options.json) this.line(JSON.stringify({ warning: oneLine(message) }));
    else this.line(`${this.colour.yellow('lazy-mcp: warning:')} ${oneLine(message)}`);
  }

  /** A tool's own failure (`isError`), in what it said. */
  toolFailed(tool: string, text: string): void {
    if (this.options.json) this.line(JSON.stringify({ error: { code: 'tool-error', message: `${tool} failed: ${text}` } }));
    else this.line(`${this.colour.red('lazy-mcp:')} ${tool} failed: ${text}`);
  }

  /** An error in one line; with `verbose`, its stack, code and the server's last stderr too. */
  error(error: unknown): void {
    if (this.options.json) {
      this.line(JSON.stringify({ error: errorRecord(error) }));
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    this.line(`${this.colour.red('lazy-mcp:')} ${oneLine(message)}`);
    if (!this.options.verbose || !(error instanceof Error)) return;
    if (error instanceof McpError) {
      this.line(`  code: ${error.code}${error.phase ? `, phase: ${error.phase}` : ''}${error.server ? `, server: ${error.server}` : ''}`);
      for (const stderrLine of error.stderrTail ?? []) this.line(`  stderr: ${stderrLine}`);
    }
    if (error.stack) this.line(error.stack);
    if (error.cause instanceof Error && error.cause.stack) this.line(`caused by: ${error.cause.stack}`);
  }

  /** A line of its own. */
  line(text: string): void {
    this.finishOpenLine();
    this.sink.write(`${text}\n`);
  }

  private finishOpenLine(): void {
    if (this.open === undefined) return;
    this.sink.write('\n');
    this.open = undefined;
  }
}
