import type { McpServerManager, ManagerEvents, Progress } from '../index.js';
import { McpError } from '../index.js';
import { oneLine } from './format.js';

/** Where the reporter writes: stderr, or a fake stream in tests. */
export interface TextSink {
  write(text: string): unknown;
}

export interface ReporterOptions {
  /** Show servers starting ("starting fs… ready in 84 ms") and call progress. */
  progress: boolean;
  /** Stream server stderr and log messages; show stacks and error details. */
  verbose: boolean;
}

/**
 * Everything the CLI tells a person goes through here, to stderr, so stdout carries
 * only results. It keeps one line "open" while a single server starts, so the common
 * case reads `starting fs… ready in 84 ms`; any other output closes that line first.
 */
export class Reporter {
  private open: string | undefined;
  private readonly startedAt = new Map<string, number>();

  constructor(
    private readonly sink: TextSink,
    private readonly options: ReporterOptions,
  ) {}

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

  warn(message: string): void {
    this.line(`lazy-mcp: warning: ${oneLine(message)}`);
  }

  /** An error in one line; with `verbose`, its stack, code and the server's last stderr too. */
  error(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.line(`lazy-mcp: ${oneLine(message)}`);
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
