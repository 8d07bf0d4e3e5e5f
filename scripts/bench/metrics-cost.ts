import { McpServerManager } from '../../src/index.js';
import { poolConfig } from './clients.js';
import type { Plan } from './plan.js';
import { Figure, type Metric } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, quantile, since } from './stats.js';

/**
 * Figure 7, a hook for the cost of `manager.metrics()`: measured only where the manager
 * has it (helper `ops` is wiring it; not on this branch). What it times: one `metrics()`
 * read over the configured servers, one of them live after calls. The counting a call
 * itself does cannot be measured apart from the call once it is always on; figure 1
 * carries it.
 */
export async function metricsFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const probe = McpServerManager.prototype as unknown as { metrics?: () => unknown };
  if (typeof probe.metrics !== 'function') {
    log('figure 7: skipped, manager.metrics() is not wired on this build');
    return [];
  }
  const server = fixtureServer('bench-echo-server.mjs');
  const m = McpServerManager.fromConfig(poolConfig(plan.configuredServers, () => server)) as McpServerManager & { metrics(): unknown };
  try {
    for (let i = 0; i < 1000; i++) await m.callTool('mcp__s0__echo', { text: 'x' });
    const figure = new Figure(7).define('metrics-read', `manager.metrics() with ${plan.configuredServers} servers configured, 1 live`, 'µs', 'lower');
    const times: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const t = now();
      m.metrics();
      times.push(since(t) * 1000);
    }
    figure.record('metrics-read', 'manager', quantile(times.sort((a, b) => a - b), 0.5));
    return figure.list();
  } finally {
    await m.shutdown();
  }
}
