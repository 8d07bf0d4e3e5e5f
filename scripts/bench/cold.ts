import { McpServerManager } from '../../src/index.js';
import { type Conn, firstText, lazy, poolConfig, sdk, bare, spawnedCount } from './clients.js';
import type { Plan } from './plan.js';
import { isGone } from './procs.js';
import { alternate, Figure, type Metric, type Variant } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, since } from './stats.js';

const ARGS = { text: 'hello' };

/** Variant names of figures 4 and 5. */
export const MANAGER = 'lazy-mcp manager';

/** Figure 4: from nothing to the first tool result, one server. The close after each run is not timed. */
export async function coldFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const server = fixtureServer('bench-echo-server.mjs');
  const figure = new Figure(4).define('cold', 'cold: start + first tool result, one server', 'ms', 'lower');
  const timed = (name: string, first: () => Promise<{ pid: number; close(): Promise<void> }>): Variant => ({
    name,
    run: async () => {
      const start = now();
      const conn = await first();
      figure.record('cold', name, since(start));
      await conn.close();
      if (!isGone(conn.pid)) throw new Error(`${name}: server ${conn.pid} outlived its close`);
    },
  });
  const viaClient = (impl: typeof lazy) => async () => {
    const conn = await impl.connect(server);
    await checkedCall(conn);
    return conn;
  };
  const viaManager = async () => {
    const manager = McpServerManager.fromConfig(poolConfig(1, () => server, 'echo'));
    const result = await manager.callTool('mcp__echo0__echo', ARGS);
    if (firstText(result) !== ARGS.text) throw new Error(`${MANAGER}: unexpected result ${JSON.stringify(result)}`);
    const pid = manager.status().echo0.pid!;
    return { pid, close: () => manager.shutdown() };
  };
  const variants = [timed('lazy-mcp', viaClient(lazy)), timed(MANAGER, viaManager), timed('sdk', viaClient(sdk)), timed('bare', viaClient(bare))];
  log(`figure 4: ${plan.coldRounds} cold starts per client`);
  for (const variant of variants) await variant.run(-1); // warm-up, dropped below
  for (const runs of Object.values(figure.metrics.get('cold')!.runs)) runs.length = 0;
  await alternate(plan.coldRounds, variants, log);
  return figure.list();
}

/**
 * Figure 5: many configured servers. lazy-mcp builds a manager of all of them (spawns
 * nothing) and calls a tool of one; the SDK way, as multi-server clients do it, connects
 * a client to every server in turn and then calls. The baseline is a manager of one server.
 */
export async function scaleFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const n = plan.scaleServers;
  const server = fixtureServer('bench-echo-server.mjs');
  const target = Math.floor(n / 2);
  const figure = new Figure(5)
    .define('scale-construct', 'configured servers: construct the manager', 'ms', 'lower')
    .define('scale-spawned', 'configured servers: processes spawned by construction', 'count', 'lower')
    .define('scale-first', 'configured servers: construct + first tool result of one', 'ms', 'lower')
    .define('scale-spawned-after', 'configured servers: processes after the first result', 'count', 'lower');
  const many = `lazy-mcp, ${n} configured`;
  const one = 'lazy-mcp, 1 configured';
  const sdkAll = `sdk, ${n} connected in turn`;

  const managerRun = (name: string, count: number, index: number): Variant => ({
    name,
    run: async () => {
      const config = poolConfig(count, () => server);
      const start = now();
      const manager = McpServerManager.fromConfig(config);
      const constructed = since(start);
      const spawned = spawnedCount(manager);
      const result = await manager.callTool(`mcp__s${index}__echo`, ARGS);
      const first = since(start);
      if (firstText(result) !== ARGS.text) throw new Error(`${name}: unexpected result`);
      figure.record('scale-construct', name, constructed);
      figure.record('scale-spawned', name, spawned);
      figure.record('scale-first', name, first);
      figure.record('scale-spawned-after', name, spawnedCount(manager));
      await manager.shutdown();
    },
  });
  const sdkRun: Variant = {
    name: sdkAll,
    rounds: plan.sdkScaleRounds,
    run: async () => {
      const conns: Conn[] = [];
      try {
        const start = now();
        for (let i = 0; i < n; i++) conns.push(await sdk.connect(server));
        const spawned = conns.length;
        await checkedCall(conns[target]);
        figure.record('scale-first', sdkAll, since(start));
        figure.record('scale-spawned-after', sdkAll, spawned);
      } finally {
        await Promise.all(conns.map((c) => c.close()));
      }
    },
  };
  log(`figure 5: ${n} servers, ${plan.scaleRounds} lazy runs, ${plan.sdkScaleRounds} SDK runs`);
  await managerRun('warm-up', 1, 0).run(-1);
  for (const metric of figure.list()) delete metric.runs['warm-up'];
  await alternate(plan.scaleRounds, [managerRun(many, n, target), managerRun(one, 1, 0), sdkRun], log);
  return figure.list();
}

async function checkedCall(conn: Conn): Promise<void> {
  const result = await conn.call('echo', ARGS);
  if (firstText(result) !== ARGS.text) throw new Error(`unexpected result ${JSON.stringify(result)}`);
}
