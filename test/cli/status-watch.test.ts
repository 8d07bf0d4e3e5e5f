import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandLine } from '../../src/cli/args.js';
import { fixture, isAlive, repoRoot, waitFor } from '../support/fixtures.js';
import { cliPath, runCli, scratchDir } from './run-cli.js';

const echo = fixture('echo-server.mjs');
const config = (...names: string[]) => JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, echo])) });

let scratch: ReturnType<typeof scratchDir>;
beforeAll(() => {
  scratch = scratchDir();
});
afterAll(() => scratch.remove());

interface Frame {
  servers: Record<string, { state: string; pid?: number; metrics: { starts: number; calls: number } }>;
}

/** `lazy-mcp status --watch` with its stdin left open, killed after the test if it is still there. */
function watching(file: string): { child: ChildProcessWithoutNullStreams; frames: () => Frame[]; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [cliPath, 'status', '--watch', '--json', '--interval', '100', '--config', file], { cwd: repoRoot, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  running.push(child);
  const frames = () =>
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Frame);
  return { child, frames, stderr: () => stderr, exited };
}

/** The promise's value, or 'still running' after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

describe('status --watch', () => {
  it('refreshes the figures, follows config edits (reporting one that does not parse), and ends with stdin', async () => {
    const file = join(scratch.path, 'watch.json');
    writeFileSync(file, config('echo'));
    const run = watching(file);
    expect(await waitFor(() => run.frames().length >= 2, 15_000)).toBe(true);
    const first = run.frames()[0].servers.echo;
    expect(first).toMatchObject({ state: 'ready', metrics: { starts: 1 } });
    writeFileSync(file, config('echo', 'more').slice(0, 20));
    expect(await waitFor(() => run.stderr().includes('not valid JSON'), 15_000)).toBe(true);
    expect(run.stderr()).toContain(file);
    writeFileSync(file, config('echo', 'more'));
    expect(await waitFor(() => run.frames().some((f) => f.servers.more !== undefined), 15_000)).toBe(true);
    const last = run.frames().at(-1) as Frame;
    expect(last.servers.more.state).toBe('idle');
    expect(last.servers.echo.pid).toBe(first.pid);
    run.child.stdin.end();
    expect(await within(run.exited, 10_000)).toBe(0);
    expect(await waitFor(() => !isAlive(first.pid as number))).toBe(true);
  });

  it('ends on Ctrl-C as an interruption and leaves no server behind', async () => {
    const file = join(scratch.path, 'interrupt.json');
    writeFileSync(file, config('echo'));
    const run = watching(file);
    expect(await waitFor(() => run.frames().length >= 1, 15_000)).toBe(true);
    const pid = run.frames()[0].servers.echo.pid as number;
    run.child.kill('SIGINT');
    expect(await within(run.exited, 10_000)).toBe(130);
    expect(run.stderr()).toContain('interrupted');
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
  });

  it('prints one table when stdin is already over', async () => {
    const file = join(scratch.path, 'once.json');
    writeFileSync(file, config('echo'));
    const run = await runCli(['status', '--watch', '--config', file]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^lazy-mcp status at .*, every 1\.0s; Ctrl-C to quit$/);
    expect(lines[2]).toMatch(/^SERVER\s+STATE\s+PID\s+CALLS\s+ERRORS\s+NOW\s+P50\s+P95\s+P99\s+STARTS\s+IN\s+OUT\s+LAST ERROR$/);
    expect(lines[3]).toMatch(/^echo\s+ready\s+\d+\s+0\s+0\s+0\s+-\s+-\s+-\s+1\s+/);
  });

  it('takes --interval only with --watch', () => {
    expect(parseCommandLine(['status', '--watch'])).toMatchObject({ command: { name: 'status', watch: { intervalMs: 1000 } } });
    expect(parseCommandLine(['status', '--watch', '--interval', '250'])).toMatchObject({ command: { watch: { intervalMs: 250 } } });
    expect(parseCommandLine(['status'])).toMatchObject({ command: { name: 'status' } });
    expect(() => parseCommandLine(['status', '--interval', '250'])).toThrow('--interval applies to status --watch only');
    expect(() => parseCommandLine(['status', '--watch', '--interval', '0'])).toThrow('--interval must be a positive whole number of milliseconds, got "0"');
    expect(() => parseCommandLine(['tools', '--watch'])).toThrow('option --watch does not apply to "tools"');
  });
});
