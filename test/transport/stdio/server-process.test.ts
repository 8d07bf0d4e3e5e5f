import pTimeout from 'p-timeout';
import { McpError } from '../../../src/errors.js';
import { SAFE_ENV_KEYS, safeEnvironment } from '../../../src/transport/stdio/child-env.js';
import { registeredGroups } from '../../../src/transport/stdio/exit-hook.js';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GroupProbe, groupIsEmpty } from '../../../src/transport/stdio/process-group.js';
import { ServerProcess, type ExitStatus, type ProcessSpec } from '../../../src/transport/stdio/server-process.js';
import { fixture, isGone, lineReader, nodeSpec, settlesWithin, waitUntil } from '../process-probes.js';

// The close bound is grace + 1000 ms; this much more absorbs a busy shared machine.
const SLACK_MS = 500;
const started: ServerProcess[] = [];

async function start(spec: ProcessSpec): Promise<ServerProcess> {
  const server = await ServerProcess.spawn(spec);
  started.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close(200)));
});

async function closeTimed(server: ServerProcess, graceMs: number): Promise<number> {
  const t0 = Date.now();
  await server.close(graceMs);
  return Date.now() - t0;
}

describe('environment', () => {
  const savedCaCerts = process.env.NODE_EXTRA_CA_CERTS;
  beforeEach(() => {
    process.env.LAZY_MCP_SECRET = 'hunter2';
    process.env.NODE_EXTRA_CA_CERTS ??= '/nonexistent/extra-ca.pem';
  });
  afterEach(() => {
    delete process.env.LAZY_MCP_SECRET;
    if (savedCaCerts === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
  });

  async function childEnv(extra: Partial<ProcessSpec>): Promise<Record<string, string>> {
    const server = await start(nodeSpec('print-env.mjs', [], extra));
    return JSON.parse(await lineReader(server.stdout).next());
  }

  test('a server gets the safe host variables and its own env, never host secrets', async () => {
    const env = await childEnv({ env: { SERVER_TOKEN: 'given' } });
    expect(env.SERVER_TOKEN).toBe('given');
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.LAZY_MCP_SECRET).toBeUndefined();
    expect(env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    for (const key of Object.keys(env)) expect([...SAFE_ENV_KEYS, 'SERVER_TOKEN']).toContain(key);
  });

  test('inheritEnv passes the whole host environment, plus env', async () => {
    const env = await childEnv({ inheritEnv: true, env: { SERVER_TOKEN: 'given' } });
    expect(env.LAZY_MCP_SECRET).toBe('hunter2');
    expect(env.NODE_EXTRA_CA_CERTS).toBe(process.env.NODE_EXTRA_CA_CERTS);
    expect(env.SERVER_TOKEN).toBe('given');
  });

  test('safeEnvironment skips shell function exports and lets env win', () => {
    const host = { PATH: '/bin', SHELL: '() { echo pwned; }', HOME: '/home/me', SECRET: 'x' };
    expect(safeEnvironment({ HOME: '/srv' }, false, host)).toEqual({ PATH: '/bin', HOME: '/srv' });
    expect(safeEnvironment({}, true, host)).toEqual(host);
  });
});

describe('streams', () => {
  test('a line written to stdin comes back on stdout', async () => {
    const server = await start(nodeSpec('echo-lines.mjs'));
    const lines = lineReader(server.stdout);
    server.stdin.write('hello\n');
    server.stdin.write('wörld\n');
    expect(await lines.next()).toBe('hello');
    expect(await lines.next()).toBe('wörld');
  });

  test('stdout a reader attaches to late has lost nothing (execa resumes unread streams)', async () => {
    const server = await start(nodeSpec('greets-at-start.mjs'));
    // Once stderr says so, "hello" has been written to stdout and is waiting.
    await new Promise<void>((resolve) => server.on('stderr', (line) => line === 'greeted' && resolve()));
    expect(await lineReader(server.stdout).next()).toBe('hello');
  });

  test('stderr is split into lines across chunks, CRLF and split UTF-8; the last partial line is flushed', async () => {
    const chunks = ['a\r\nb', 'c\n\n', { bytes: [0xc3] }, { bytes: [0xa9, 0x0a] }, 'no newline at end'];
    const server = await start(nodeSpec('stderr-lines.mjs', [JSON.stringify(chunks)]));
    const seen: string[] = [];
    server.on('stderr', (line) => seen.push(line));
    await waitUntil(() => seen.length >= 3, 5000, 'three stderr lines');
    await server.close();
    expect(seen).toEqual(['a', 'bc', 'é', 'no newline at end']);
    expect(server.stderrTail()).toEqual(seen);
  });

  test('the stderr tail is bounded in lines, bytes and line length', async () => {
    const many = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    const server = await start(nodeSpec('stderr-lines.mjs', [JSON.stringify([many])], { stderrTailLines: 5 }));
    const seen: string[] = [];
    server.on('stderr', (line) => seen.push(line));
    await waitUntil(() => seen.length === 200, 5000, '200 stderr lines');
    expect(server.stderrTail()).toEqual(['line 195', 'line 196', 'line 197', 'line 198', 'line 199']);

    const long = `${'x'.repeat(10_000)}\n`;
    const lines = ['first line\n', long, 'after\n'];
    const small = await start(nodeSpec('stderr-lines.mjs', [JSON.stringify(lines)], { stderrTailBytes: 1000 }));
    const got: string[] = [];
    small.on('stderr', (line) => got.push(line));
    await waitUntil(() => got.length === 3, 5000, 'three stderr lines');
    expect(got[1]).toBe(`${'x'.repeat(4096)}…`);
    const tail = small.stderrTail();
    expect(Buffer.byteLength(tail.join(''))).toBeLessThanOrEqual(1000);
    expect(tail.at(-1)).toBe('after');
  });
});

describe('exit status', () => {
  test('an exit code, with the stderr written just before it', async () => {
    const server = await start(nodeSpec('exit-with.mjs', ['3']));
    const events: ExitStatus[] = [];
    server.on('exit', (status) => events.push(status));
    expect(server.alive).toBe(true);
    expect(await server.exited).toEqual({ exitCode: 3 });
    expect(server.exitStatus).toEqual({ exitCode: 3 });
    expect(server.alive).toBe(false);
    expect(events).toEqual([{ exitCode: 3 }]);
    expect(server.stderrTail()).toEqual(['exiting with 3']);
  });

  test('a signal', async () => {
    const server = await start(nodeSpec('exit-with.mjs', ['SIGKILL']));
    expect(await server.exited).toEqual({ signal: 'SIGKILL' });
  });
});

describe('spawn failures', () => {
  async function failure(spec: ProcessSpec): Promise<McpError> {
    const before = registeredGroups().length;
    const error = await ServerProcess.spawn(spec).then(
      () => Promise.reject(new Error('spawned')),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect(registeredGroups()).toHaveLength(before);
    return error as McpError;
  }

  test('command not found', async () => {
    const error = await failure({ name: 'ghost', command: 'lazy-mcp-no-such-command' });
    expect(error).toMatchObject({ code: 'spawn-failed', phase: 'spawn', server: 'ghost' });
    expect(error.message).toBe(
      'server "ghost": cannot start "lazy-mcp-no-such-command": command not found (ENOENT); check that it is installed and on PATH',
    );
  });

  test('not executable', async () => {
    const error = await failure({ name: 'locked', command: fixture('not-executable.txt') });
    expect(error).toMatchObject({ code: 'spawn-failed', phase: 'spawn', server: 'locked' });
    expect(error.message).toMatch(/^server "locked": cannot start ".*not-executable\.txt": permission denied \(EACCES\)/);
  });

  test('missing or non-directory working directory', async () => {
    const missing = await failure({ name: 'fs', command: process.execPath, cwd: '/nonexistent/lazy-mcp' });
    expect(missing).toMatchObject({ code: 'spawn-failed', phase: 'spawn', server: 'fs' });
    expect(missing.message).toBe(`server "fs": cannot start ${JSON.stringify(process.execPath)}: working directory "/nonexistent/lazy-mcp" does not exist`);
    const file = await failure({ name: 'fs', command: process.execPath, cwd: fixture('not-executable.txt') });
    expect(file.message).toMatch(/working directory ".*not-executable\.txt" is not a directory$/);
  });

  test('an invalid spec names the field and the value', async () => {
    const error = await failure({ name: 'fs', command: process.execPath, stderrTailLines: -1 });
    expect(error).toMatchObject({ code: 'invalid-config', server: 'fs' });
    expect(error.message).toBe('server "fs": `stderrTailLines` must be a non-negative integer, got -1 (number)');
  });
});

describe('close', () => {
  test('a polite server exits on stdin EOF, well before SIGTERM', async () => {
    const server = await start(nodeSpec('echo-lines.mjs'));
    const elapsed = await closeTimed(server, 2000);
    expect(elapsed).toBeLessThan(1000);
    expect(server.exitStatus).toEqual({ exitCode: 0 });
    expect(isGone(server.pid)).toBe(true);
    expect(registeredGroups()).not.toContain(server.pid);
  });

  test('one that ignores stdin EOF is stopped by SIGTERM at grace / 2', async () => {
    const server = await start(nodeSpec('ignores-stdin-eof.mjs'));
    expect(await lineReader(server.stdout).next()).toBe('ready');
    const elapsed = await closeTimed(server, 1000);
    expect(server.exitStatus).toEqual({ signal: 'SIGTERM' });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1000 + SLACK_MS);
    expect(isGone(server.pid)).toBe(true);
  });

  test('one that also ignores SIGTERM is killed at grace, within grace + 1 s', async () => {
    const server = await start(nodeSpec('ignores-sigterm.mjs'));
    expect(await lineReader(server.stdout).next()).toBe('ready');
    const elapsed = await closeTimed(server, 1000);
    expect(server.exitStatus).toEqual({ signal: 'SIGKILL' });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1000 + 1000 + SLACK_MS);
    expect(isGone(server.pid)).toBe(true);
    expect(server.stderrTail()).toContain('ignoring SIGTERM');
  });

  test("a wrapper's grandchild dies with it (the whole group)", async () => {
    const server = await start(nodeSpec('spawns-grandchild.mjs'));
    const { grandchild } = JSON.parse(await lineReader(server.stdout).next());
    expect(isGone(grandchild)).toBe(false);
    const elapsed = await closeTimed(server, 1000);
    expect(elapsed).toBeLessThan(1000 + 1000 + SLACK_MS);
    expect(isGone(server.pid)).toBe(true);
    expect(isGone(grandchild)).toBe(true);
    expect(await groupIsEmpty(server.pid)).toBe(true);
    expect(registeredGroups()).not.toContain(server.pid);
  });

  test('a group whose leader already exited is still killed', async () => {
    const server = await start(nodeSpec('spawns-grandchild.mjs'));
    const { grandchild } = JSON.parse(await lineReader(server.stdout).next());
    server.stdin.end();
    expect(await server.exited).toEqual({ exitCode: 0 });
    expect(isGone(grandchild)).toBe(false);
    expect(registeredGroups()).toContain(server.pid);
    const elapsed = await closeTimed(server, 1000);
    expect(elapsed).toBeLessThan(1000 + 1000 + SLACK_MS);
    expect(isGone(grandchild)).toBe(true);
    // Unregistered once the group is seen empty: at close() on a quiet machine, by the
    // watch that close() leaves when a loaded one reaps the group past its bound.
    await waitUntil(() => !registeredGroups().includes(server.pid), 5000, 'the group to be unregistered');
  });

  test('watching a group whose leader is gone never blocks the event loop', async () => {
    const server = await start(nodeSpec('spawns-grandchild.mjs'));
    const { grandchild } = JSON.parse(await lineReader(server.stdout).next());
    server.stdin.end();
    await server.exited;
    // The group lives on in the grandchild, so each probe has to look at /proc: while it
    // does, timers still run.
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      const probe = new GroupProbe(server.pid);
      const first = probe.isEmpty();
      expect(first).toBeInstanceOf(Promise);
      expect(await first).toBe(false);
      expect(turns).toBeGreaterThan(0);
      // Later probes check the members found before instead of scanning all of /proc.
      expect(await probe.isEmpty()).toBe(false);
      const loopDelay = monitorEventLoopDelay({ resolution: 1 });
      loopDelay.enable();
      const elapsed = await closeTimed(server, 1000);
      loopDelay.disable();
      expect(elapsed).toBeLessThan(1000 + 1000 + SLACK_MS);
      expect(isGone(grandchild)).toBe(true);
      expect(await probe.isEmpty()).toBe(true);
      // Generous for a loaded machine; a blocking scan per 25 ms poll shows up as a stalled loop.
      expect(loopDelay.max / 1e6).toBeLessThan(250);
    } finally {
      clearInterval(ticker);
    }
  });

  test('is idempotent: concurrent and later calls share one promise that never rejects', async () => {
    const server = await start(nodeSpec('echo-lines.mjs'));
    const first = server.close();
    const second = server.close(10);
    expect(second).toBe(first);
    await expect(first).resolves.toBeUndefined();
    expect(server.close()).toBe(first);
    await server[Symbol.asyncDispose]();
    expect(isGone(server.pid)).toBe(true);
  });

  test('of a process that has already exited resolves at once', async () => {
    const server = await start(nodeSpec('exit-with.mjs', ['0']));
    await server.exited;
    expect(await closeTimed(server, 2000)).toBeLessThan(500);
  });
});

describe('lifetime', () => {
  // The regression of a peer library's Go port: a connect deadline bound to the spawn
  // killed every stdio server right after connect. No start-up deadline may own the process.
  const STARTUP_TIMEOUT_MS = 1000;

  async function startWithinDeadline(): Promise<{ server: ServerProcess; next: () => Promise<string> }> {
    const starting = (async () => {
      const server = await start(nodeSpec('echo-lines.mjs'));
      const lines = lineReader(server.stdout);
      server.stdin.write('first\n');
      await lines.next();
      return { server, next: () => lines.next() };
    })();
    return pTimeout(starting, { milliseconds: STARTUP_TIMEOUT_MS, signal: AbortSignal.timeout(STARTUP_TIMEOUT_MS) });
  }

  test('a server started under a start-up timeout outlives it and still answers', async () => {
    const t0 = Date.now();
    const { server, next } = await startWithinDeadline();
    const exitedEarly = await settlesWithin(server.exited, t0 + STARTUP_TIMEOUT_MS + 300 - Date.now());
    expect(exitedEarly).toBe(false);
    expect(Date.now() - t0).toBeGreaterThan(STARTUP_TIMEOUT_MS);
    expect(server.alive).toBe(true);
    server.stdin.write('still here\n');
    expect(await next()).toBe('still here');
  });
});
