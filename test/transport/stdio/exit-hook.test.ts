import { execa } from 'execa';
import { killLeftovers } from '../../support/fixtures.js';
import { fixture, isGone, nodeSpec, waitUntil } from '../process-probes.js';

const HOOK_EVENTS = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const listenerCounts = () => HOOK_EVENTS.map((event) => process.listenerCount(event));

describe('in this process', () => {
  test('importing installs nothing; the hook exists only while a server group is live', async () => {
    const before = listenerCounts();
    // Loaded here, after counting, to see that loading has no side effects.
    const { ServerProcess } = await import('../../../src/transport/stdio/server-process.js');
    const { registeredGroups } = await import('../../../src/transport/stdio/exit-hook.js');
    const { reaperRunning } = await import('../../../src/transport/stdio/reaper.js');
    expect(listenerCounts()).toEqual(before);

    const server = await ServerProcess.spawn(nodeSpec('echo-lines.mjs'));
    try {
      expect(registeredGroups()).toEqual([server.pid]);
      // Only 'exit': with the reaper running, the host's signals keep their default action.
      expect(reaperRunning()).toBe(true);
      expect(listenerCounts()).toEqual(before.map((n, i) => (i === 0 ? n + 1 : n)));
    } finally {
      await server.close();
    }
    expect(registeredGroups()).toEqual([]);
    expect(listenerCounts()).toEqual(before);
  });
});

describe('a host that exits without closing its server', () => {
  const leftovers: number[] = [];
  afterEach(() => killLeftovers(leftovers));

  // Each mode, and how the host itself must end: the hook may not change that.
  test.each([
    ['exit', { exitCode: 0 }],
    ['exception', { exitCode: 1 }],
    ['rejection', { exitCode: 1 }],
    ['SIGTERM', { signal: 'SIGTERM' }],
    ['SIGINT', { signal: 'SIGINT' }],
    ['SIGHUP', { signal: 'SIGHUP' }],
    // The host's own SIGTERM handler decides (here: exit 3 a moment later); the hook neither preempts nor swallows it.
    ['handled-SIGTERM', { exitCode: 3 }],
  ])('%s: the server and its grandchild are gone afterwards', async (mode, ending) => {
    const host = await execa(process.execPath, [fixture('host-exits-without-close.mjs'), mode], {
      reject: false,
      timeout: 15_000,
    });
    const line = host.stdout.split('\n').find((l) => l.startsWith('{"pids"'));
    expect(line).toBeDefined();
    const pids: number[] = JSON.parse(line!).pids;
    leftovers.push(...pids);
    expect(pids).toHaveLength(2);
    expect({ exitCode: host.exitCode, signal: host.signal }).toEqual({ exitCode: undefined, signal: undefined, ...ending });
    await waitUntil(() => pids.every(isGone), 5000, `pids ${pids.join(', ')} to be gone`);
  });
});
