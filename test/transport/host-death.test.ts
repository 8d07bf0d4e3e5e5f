import { spawn, type ChildProcess } from 'node:child_process';
import { safeEnvironment } from '../../src/transport/stdio/child-env.js';
import { killLeftovers } from '../support/fixtures.js';
import { fixture, isGone, lineReader, waitUntil } from './process-probes.js';

// "About a second" after the host is gone, plus room for a loaded machine.
const GONE_WITHIN_MS = 2500;
const leftovers: number[] = [];

interface Host {
  child: ChildProcess;
  pids: number[];
  reaper: number;
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  lines: ReturnType<typeof lineReader>;
}

async function startHost(mode: 'plain' | 'signal-exit' | 'handler'): Promise<Host> {
  const child = spawn(process.execPath, [fixture('host-keeps-servers.mjs'), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: safeEnvironment(),
  });
  leftovers.push(child.pid!);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = lineReader(child.stdout!);
  const { pids, reaper } = JSON.parse(await lines.next(15_000));
  leftovers.push(...pids, reaper);
  return { child, pids, reaper, ended, lines };
}

async function endsWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

afterEach(() => killLeftovers(leftovers));

describe('a host killed with SIGKILL', () => {
  test('leaves no server behind: not one ignoring stdin EOF, not a wrapper\'s grandchild, not one stuck in initialize', async () => {
    const host = await startHost('plain');
    expect(host.pids).toHaveLength(4);
    expect(host.pids.every((pid) => !isGone(pid))).toBe(true);
    expect(isGone(host.reaper)).toBe(false);
    host.child.kill('SIGKILL');
    expect(await endsWithin(host.ended, 5000)).toEqual({ code: null, signal: 'SIGKILL' });
    await waitUntil(() => host.pids.every(isGone), GONE_WITHIN_MS, `servers ${host.pids.join(', ')} to be gone`);
    // The reaper outlives the host only while it kills.
    await waitUntil(() => isGone(host.reaper), GONE_WITHIN_MS, `reaper ${host.reaper} to exit`);
  });
});

describe('a host that gets a signal', () => {
  test.each([
    ['plain', 'SIGTERM'],
    ['signal-exit', 'SIGTERM'],
    ['signal-exit', 'SIGINT'],
    ['signal-exit', 'SIGHUP'],
  ] as const)('%s host, %s: dies by the signal as it would without us, and its servers die', async (mode, signal) => {
    const host = await startHost(mode);
    host.child.kill(signal);
    expect(await endsWithin(host.ended, 2500)).toEqual({ code: null, signal });
    await waitUntil(() => host.pids.every(isGone), GONE_WITHIN_MS, `servers ${host.pids.join(', ')} to be gone`);
  });

  test('with a handler of its own, keeps control: it lives on with its servers until it ends', async () => {
    const host = await startHost('handler');
    host.child.kill('SIGTERM');
    expect(await host.lines.next(5000)).toBe('handled');
    // Still running a while later, and so are its servers.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(host.child.exitCode).toBeNull();
    expect(host.pids.every((pid) => !isGone(pid))).toBe(true);
    host.child.kill('SIGKILL');
    await endsWithin(host.ended, 5000);
    await waitUntil(() => host.pids.every(isGone), GONE_WITHIN_MS, `servers ${host.pids.join(', ')} to be gone`);
  });
});
