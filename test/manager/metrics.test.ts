import { MetricsRecorder } from '../../src/manager/metrics.js';

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
