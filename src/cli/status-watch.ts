import type { Readable } from 'node:stream';
import type { ManagerEvents, ServerMetrics, ServerStatus } from '../index.js';
import type { CommandContext } from './commands.js';
import { formatBytes, oneLine, statusJson, table } from './format.js';

/** Moves to the top left and clears the screen, so each refresh replaces the last. */
const CLEAR = '\x1b[H\x1b[2J';

interface WatchOptions {
  intervalMs: number;
  /** Its end (Ctrl-D, a closed pipe) ends the watch. Default: stdin. */
  input?: Readable;
  /** Whether to redraw in place (a terminal) rather than print one refresh after another. */
  redraw?: boolean;
}

/**
 * `status --watch`: starts the servers as `status` does, then shows every server's state
 * and figures each `intervalMs` until the input ends (resolves 0) or Ctrl-C (rejects with
 * the abort, so the command reports the interruption). The config file is watched by the
 * manager, so an edit shows in the next refresh.
 */
export async function watchStatus(ctx: CommandContext, options: WatchOptions): Promise<number> {
  const input = options.input ?? process.stdin;
  const stop = new AbortController();
  const end = () => stop.abort();
  const onConfigError = ({ error }: ManagerEvents['configError']) => ctx.reporter.error(error);
  ctx.signal.addEventListener('abort', end, { once: true });
  input.once('end', end).once('close', end);
  // Read (and drop) the input: a stream that is never read never ends.
  input.on('data', ignore).resume();
  ctx.manager.on('configError', onConfigError);
  try {
    await ctx.manager.listTools();
    // At least one refresh, even when the input is already over (`< /dev/null`).
    do {
      ctx.print(frame(ctx, options.redraw ?? false, options.intervalMs));
      await pause(options.intervalMs, stop.signal);
    } while (!stop.signal.aborted);
  } finally {
    ctx.signal.removeEventListener('abort', end);
    input.off('end', end).off('close', end).off('data', ignore);
    input.pause();
    ctx.manager.off('configError', onConfigError);
  }
  if (ctx.signal.aborted) throw ctx.signal.reason;
  return 0;
}

function frame(ctx: CommandContext, redraw: boolean, intervalMs: number): string {
  const status = ctx.manager.status();
  const metrics = ctx.manager.metrics();
  if (ctx.json) return JSON.stringify({ at: new Date().toISOString(), servers: statusJson(status, metrics) });
  const rows = Object.entries(status).map(([server, s]) => row(server, s, metrics[server]));
  const header = ['SERVER', 'STATE', 'PID', 'CALLS', 'ERRORS', 'NOW', 'P50', 'P95', 'P99', 'STARTS', 'IN', 'OUT', 'LAST ERROR'];
  const title = `lazy-mcp status at ${new Date().toLocaleTimeString()}, every ${formatMs(intervalMs)}; Ctrl-C to quit`;
  return `${redraw ? CLEAR : ''}${title}\n\n${table(header, rows, ctx.width)}${redraw ? '' : '\n'}`;
}

function row(server: string, s: ServerStatus, m: ServerMetrics | undefined): string[] {
  const errors = m ? Object.values(m.errors).reduce((sum, n) => sum + (n ?? 0), 0) : 0;
  const latency = (ms: number) => (m && m.latencyMs.count > 0 ? formatMs(ms) : '-');
  return [
    server,
    s.state,
    s.pid === undefined ? '-' : String(s.pid),
    String(m?.calls ?? 0),
    String(errors),
    String(m?.inFlight ?? 0),
    latency(m?.latencyMs.p50 ?? 0),
    latency(m?.latencyMs.p95 ?? 0),
    latency(m?.latencyMs.p99 ?? 0),
    m ? `${m.starts}${m.restarts > 0 ? ` (${m.restarts} re)` : ''}` : '0',
    formatBytes(m?.bytesIn ?? 0),
    formatBytes(m?.bytesOut ?? 0),
    s.lastError ? oneLine(s.lastError.message) : '',
  ];
}

/** `0.4ms`, `12ms`, `1.5s`. */
function formatMs(ms: number): string {
  if (ms < 1) return `${ms.toFixed(1)}ms`;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Waits `ms`, or less if `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function ignore(): void {}
