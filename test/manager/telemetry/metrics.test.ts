import { McpServerManager } from '../../../src/manager/manager.js';
import { MetricsRecorder } from '../../../src/manager/telemetry/metrics.js';
import { fixture, waitFor } from '../../support/fixtures.js';

describe('MetricsRecorder', () => {
  it('counts calls, errors by code and what is in flight', () => {
    const m = new MetricsRecorder();
    const a = m.begin();
    const b = m.begin();
    const c = m.begin();
    expect(m.snapshot().inFlight).toBe(3);
    m.end(a);
    m.end(b, 'timeout');
    m.end(c, 'timeout');
    const s = m.snapshot();
    expect(s).toMatchObject({ calls: 3, inFlight: 0, errors: { timeout: 2 } });
    expect(s.latencyMs.count).toBe(3);
  });

  it('gives quantiles within the histogram resolution', () => {
    const m = new MetricsRecorder();
    const now = performance.now;
    let clock = 0;
    performance.now = () => clock;
    try {
      for (let i = 1; i <= 100; i++) {
        const began = m.begin();
        clock += i; // request i takes i ms
        m.end(began);
      }
    } finally {
      performance.now = now;
    }
    const { p50, p95, p99, max } = m.snapshot().latencyMs;
    expect(p50).toBeGreaterThanOrEqual(50 * 0.9);
    expect(p50).toBeLessThanOrEqual(50 * 1.1);
    expect(p95).toBeGreaterThanOrEqual(95 * 0.9);
    expect(p99).toBeLessThanOrEqual(100);
    expect(max).toBe(100);
  });

  it('counts starts and restarts', () => {
    const m = new MetricsRecorder();
    m.started(12);
    m.started(8);
    expect(m.snapshot()).toMatchObject({ starts: 2, restarts: 1, lastStartMs: 8 });
    expect(m.snapshot().lastStartAt).toBeGreaterThan(0);
  });
});

describe('MetricsRecorder traffic', () => {
  it('adds the running connection\'s byte counters to those of connections that are gone', () => {
    const m = new MetricsRecorder();
    const first = { bytesIn: 100, bytesOut: 40 };
    m.connected(first);
    first.bytesIn = 150; // read when asked for, not copied when connected
    expect(m.snapshot()).toMatchObject({ bytesIn: 150, bytesOut: 40 });
    m.connected(undefined);
    m.connected({ bytesIn: 5, bytesOut: 6 });
    expect(m.snapshot()).toMatchObject({ bytesIn: 155, bytesOut: 46 });
  });
});

describe('manager.metrics()', () => {
  const managers: McpServerManager[] = [];
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
  });

  it('gives the figures of a known sequence of calls, failures, a crash and a restart', async () => {
    const manager = McpServerManager.fromConfig({ mcpServers: { echo: { ...fixture('echo-server.mjs'), tools: { deny: ['add'] } }, other: fixture('echo-server.mjs') } });
    managers.push(manager);
    expect(manager.metrics().echo).toMatchObject({ calls: 0, errors: {}, inFlight: 0, starts: 0, restarts: 0, latencyMs: { count: 0, p50: 0 } });
    expect(manager.metrics().echo.lastStartAt).toBeUndefined();
    const before = Date.now();
    for (let i = 0; i < 3; i++) await manager.callTool('mcp__echo__echo', { text: 'x' });
    await manager.callTool('mcp__echo__fail'); // the tool's own failure is a result, not an error
    await expect(manager.callTool('mcp__echo__missing_file')).rejects.toMatchObject({ code: 'rpc-error' });
    await expect(manager.callTool('mcp__echo__slow', { ms: 5000 }, { timeout: 300 })).rejects.toMatchObject({ code: 'timeout' });
    // Never sent, so not counted: a tool the config filters out.
    await expect(manager.callTool('mcp__echo__add', { a: 1, b: 2 })).rejects.toMatchObject({ code: 'unknown-tool' });

    const slow = manager.callTool('mcp__echo__slow', { ms: 300 });
    expect(await waitFor(() => manager.metrics().echo.inFlight === 1)).toBe(true);
    await slow;

    let m = manager.metrics().echo;
    expect(m).toMatchObject({ calls: 7, errors: { 'rpc-error': 1, timeout: 1 }, inFlight: 0, starts: 1, restarts: 0 });
    expect(m.latencyMs.count).toBe(7);
    expect(m.latencyMs.max).toBeGreaterThanOrEqual(300 * 0.9);
    expect(m.latencyMs.p99).toBeGreaterThanOrEqual(300 * 0.9);
    expect(m.latencyMs.p50).toBeLessThan(m.latencyMs.max);
    expect(m.lastStartAt).toBeGreaterThanOrEqual(before - 5000);
    expect(m.lastStartMs).toBeGreaterThan(0);
    // The handshake, the listing and seven calls went over the pipes, both ways.
    expect(m.bytesOut).toBeGreaterThan(7 * 40);
    expect(m.bytesIn).toBeGreaterThan(7 * 40);

    await expect(manager.callTool('mcp__echo__crash')).rejects.toMatchObject({ code: 'peer-exited' });
    await manager.callTool('mcp__echo__echo', { text: 'back' });
    const firstIn = m.bytesIn;
    m = manager.metrics().echo;
    expect(m).toMatchObject({ calls: 9, errors: { 'rpc-error': 1, timeout: 1, 'peer-exited': 1 }, starts: 2, restarts: 1 });
    // The crashed connection's bytes stay counted.
    expect(m.bytesIn).toBeGreaterThan(firstIn);
    expect(manager.status().echo.restarts).toBe(1);
    // The other server's figures are its own.
    expect(manager.metrics().other).toMatchObject({ calls: 0, starts: 0 });
  });
});
