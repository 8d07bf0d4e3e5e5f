import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { repoRoot, waitFor } from '../support/fixtures.js';

/** The built CLI and demo (the global setup builds dist before any test). */
export const cliPath = resolve(repoRoot, 'dist/cli/main.js');
export const demoPath = resolve(repoRoot, 'dist/cli/demo.js');

export const fixtureConfig = (name: string): string => resolve(repoRoot, 'test/fixtures', name);

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  /** Added to the environment. */
  env?: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** The run is killed (and the test fails) after this long. Default 20000 ms. */
  timeoutMs?: number;
  /** Called once the child is spawned, e.g. to signal it. */
  onSpawn?: (child: ChildProcess, output: { stdout: () => string; stderr: () => string }) => void;
}

/** A scratch folder per test file, for the memory server's file, caches and configs. */
export function scratchDir(): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'lazy-mcp-cli-test-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Runs a script with this Node and resolves when it has exited (bounded by `timeoutMs`). */
export function runNode(script: string, args: readonly string[], options: RunOptions = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: options.cwd ?? repoRoot,
    // A stray LAZY_MCP_* (or colour setting) of the machine running the tests must not change what is tested.
    env: { ...withoutLazyMcpVariables(process.env), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.input ?? '');
  options.onSpawn?.(child, { stdout: () => stdout, stderr: () => stderr });
  const timeoutMs = options.timeoutMs ?? 20_000;
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      // SIGTERM lets the CLI shut its servers down, so even a hung run leaves nothing behind.
      child.kill('SIGTERM');
      reject(new Error(`${script} ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `lazy-mcp …` as a child process. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliRun> {
  return runNode(cliPath, args, options);
}

function withoutLazyMcpVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => !entry[0].startsWith('LAZY_MCP_') && entry[0] !== 'FORCE_COLOR' && entry[0] !== 'NO_COLOR' && entry[1] !== undefined),
  );
}

/** Pids of the live processes whose parent is `ppid` (Linux /proc). */
export function childrenOf(ppid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== ppid || /^State:\s+Z/m.test(status)) continue;
      // The host's reaper watches over the servers; it is not one of them.
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('lazy-mcp-reaper')) continue;
      found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** What {@link serveEach}'s `serve` gives: the URL once listening, or the exit status if it ended first. */
export interface ServedGateway {
  url: string | undefined;
  exit: number | null | undefined;
  stderr: () => string;
}

/**
 * A `serve(args, env)` for a test file: `lazy-mcp serve …` in a child (with only PATH and
 * `env`), resolving once it listens or ends. Each child still running after its test is
 * stopped (SIGTERM), and waited for.
 */
export function serveEach(): (args: string[], env?: Record<string, string>) => Promise<ServedGateway> {
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
  return async (args, env = {}) => {
    const child = spawn(process.execPath, [cliPath, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
    children.push(child);
    let stderr = '';
    let exit: number | null | undefined;
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => (exit = code));
    expect(await waitFor(() => exit !== undefined || /listening on \S+/.test(stderr), 15000, 20)).toBe(true);
    return { url: /listening on (\S+)/.exec(stderr)?.[1], exit, stderr: () => stderr };
  };
}
