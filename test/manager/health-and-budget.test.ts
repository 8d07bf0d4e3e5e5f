import { McpError } from '../../src/errors.js';
import { McpServerManager } from '../../src/manager/manager.js';
import { FAILED_PROBES_TO_RESTART } from '../../src/manager/pool/health.js';
import { fixture, isAlive, textOf, waitFor } from '../support/fixtures.js';

const managers: McpServerManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
function manage(servers: Record<string, object>) {
  const manager = McpServerManager.fromConfig({ mcpServers: servers });
  managers.push(manager);
  const starts: string[] = [];
  const transitions: string[] = [];
  manager.on('stateChange', ({ server, from, to }) => {
    transitions.push(`${server}:${from}>${to}`);
    if (to === 'starting') starts.push(server);
  });
  return { manager, starts, transitions };
}

describe('healthCheck', () => {
  const check = { intervalMs: 150, timeoutMs: 150 };

  it('restarts a server that answers initialize and then nothing, after consecutive failed probes', async () => {
    const { manager, starts } = manage({
      wedged: { ...fixture('wedged-after-init.mjs'), healthCheck: check },
      // Its probes get a generous time-out, so a loaded machine cannot make it look wedged.
      healthy: { ...fixture('echo-server.mjs'), healthCheck: { intervalMs: 150, timeoutMs: 5000 } },
    });
    await manager.listTools();
    const { wedged, healthy } = manager.status();
    expect(wedged.state).toBe('ready');
    const firstPid = wedged.pid as number;

    // Two restarts of the wedged one: each after FAILED_PROBES_TO_RESTART probes (~0.9 s here).
    expect(await waitFor(() => manager.status().wedged.restarts >= 2 && manager.status().wedged.state === 'ready', 15000)).toBe(true);
    const after = manager.status().wedged;
    expect(after.pid).not.toBe(firstPid);
    expect(after.lastError).toBeInstanceOf(McpError);
    expect(after.lastError).toMatchObject({ code: 'timeout', server: 'wedged', phase: 'ping' });
    expect(after.lastError?.message).toMatch(new RegExp(`^server "wedged": the server failed ${FAILED_PROBES_TO_RESTART} health checks in a row and was restarted`));
    expect(await waitFor(() => !isAlive(firstPid), 5000)).toBe(true);

    // The one that answers its probes kept its process all along.
    expect(manager.status().healthy).toMatchObject({ state: 'ready', restarts: 0, pid: healthy.pid });
    expect(starts.filter((s) => s === 'healthy')).toHaveLength(1);
    expect(textOf(await manager.callTool('mcp__healthy__echo', { text: 'ok' }))).toContain('ok');
  });

  it('never keeps an idle server from being stopped (probes are not activity)', async () => {
    const { manager, transitions } = manage({ echo: { ...fixture('echo-server.mjs'), idleTimeout: 600, healthCheck: { intervalMs: 100 } } });
    await manager.listTools();
    expect(await waitFor(() => manager.status().echo.state === 'stopped', 5000)).toBe(true);
    expect(transitions).toEqual(['echo:idle>starting', 'echo:starting>ready', 'echo:ready>stopped']);
  });

  it('stops probing a server that was shut down', async () => {
    const { manager, transitions } = manage({ wedged: { ...fixture('wedged-after-init.mjs'), healthCheck: check } });
    await manager.listTools();
    await manager.shutdown();
    const seen = transitions.length;
    // Longer than the probes a restart needs: still no new start.
    const started = Date.now();
    expect(await waitFor(() => transitions.length > seen, 1500)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(manager.status().wedged.state).toBe('closed');
  });
});

describe("a first call's time-out covers the server's start", () => {
  it('times out at the call’s timeout, not after the start, and the start goes on for later calls', async () => {
    const { manager, starts } = manage({ slow: fixture('slow-init.mjs', '4000') });
    const began = performance.now();
    const error = await manager.callTool('mcp__slow__slow_hello', {}, { timeout: 1500 }).catch((e: unknown) => e);
    const took = performance.now() - began;
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: 'timeout', server: 'slow' });
    expect((error as McpError).message).toMatch(/timed out after 1500 ms/);
    expect(took).toBeGreaterThanOrEqual(1450);
    expect(took).toBeLessThan(3500);

    // The start was not this call's: it goes on, and the next call uses it.
    expect(textOf(await manager.callTool('mcp__slow__slow_hello'))).toBe('hello from slow');
    expect(starts).toEqual(['slow']);
  });

  it('does the same for maxTotalTimeout and for callServerTool', async () => {
    const { manager } = manage({ slow: fixture('slow-init.mjs', '4000') });
    const timed = async (call: Promise<unknown>) => {
      const began = performance.now();
      const error = await call.catch((e: unknown) => e);
      return { error, took: performance.now() - began };
    };
    const total = await timed(manager.callTool('mcp__slow__slow_hello', {}, { maxTotalTimeout: 1000 }));
    const direct = await timed(manager.callServerTool('slow', 'slow_hello', {}, { timeout: 1000 }));
    for (const { error, took } of [total, direct]) {
      expect(error).toMatchObject({ code: 'timeout', server: 'slow' });
      expect((error as McpError).message).toMatch(/timed out after 1000 ms/);
      expect(took).toBeGreaterThanOrEqual(950);
      expect(took).toBeLessThan(3000);
    }
  });
});
