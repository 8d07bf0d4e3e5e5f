import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServerManager } from '../../src/index.js';
import { findSandboxTool } from '../../src/transport/stdio/sandbox/tool.js';
import { BarePipe } from './bare-pipe.js';
import { bare, client, firstText, poolConfig } from './clients.js';
import type { Plan } from './plan.js';
import { isGone } from './procs.js';
import { alternate, Figure, type Metric, type Variant } from './runs.js';
import { fixtureServer } from './setup.js';
import { now, since } from './stats.js';

const ARGS = { text: 'hello' };
export const MANAGER_CACHED = 'manager, warm cache';
export const MANAGER_UNCACHED = 'manager, no cache';
export const MANAGER_SANDBOXED = 'manager, no cache, sandboxed';

/**
 * Figure 4: from nothing to the first tool result, one server, host and child on the
 * same CPU. The manager has a warm manifest cache (written by an earlier manager) and a
 * legacy-era server, whose era is known before it starts; the bare pipe spawns, does
 * `initialize` + `initialized` by hand and calls. The close after each run is not timed.
 */
export async function coldFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const server = fixtureServer('bench-echo-server.mjs');
  const config = poolConfig(1, () => server, 'echo');
  const cacheDir = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-cold-'));
  const figure = new Figure(4).define('cold', 'cold: spawn + handshake + first tool result, one server', 'ms', 'lower');
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
  // The same server in a default sandbox (bwrap on Linux): what the sandbox's setup costs a cold start.
  const sandboxed = { mcpServers: { echo0: { ...config.mcpServers.echo0!, sandbox: true } } };
  const viaManager = (options: { cacheDir?: string }, servers: object = config) => async () => {
    const m = McpServerManager.fromConfig(servers, options);
    const result = await m.callTool('mcp__echo0__echo', ARGS);
    if (firstText(result) !== ARGS.text) throw new Error(`manager: unexpected result ${JSON.stringify(result)}`);
    return { pid: m.status().echo0.pid!, close: () => m.shutdown() };
  };
  const viaBare = async () => {
    const pipe = await BarePipe.connect(server);
    if (firstText(await pipe.callTool('echo', ARGS)) !== ARGS.text) throw new Error('bare: unexpected result');
    return pipe;
  };
  const viaClient = async () => {
    const conn = await client.connect(server);
    if (firstText(await conn.call('echo', ARGS)) !== ARGS.text) throw new Error('McpClient: unexpected result');
    return conn;
  };
  const variants = [timed(bare.name, viaBare), timed(MANAGER_CACHED, viaManager({ cacheDir })), timed(client.name, viaClient), timed(MANAGER_UNCACHED, viaManager({}))];
  if (sandboxAvailable(log)) variants.push(timed(MANAGER_SANDBOXED, viaManager({}, sandboxed)));
  try {
    log(`figure 4: ${plan.coldRounds} cold first calls per client`);
    for (const variant of variants) await variant.run(-1); // warm-up (and the manager's cache), dropped below
    for (const runs of Object.values(figure.metrics.get('cold')!.runs)) runs.length = 0;
    await alternate(plan.coldRounds, variants, log);
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
  return figure.list();
}

function sandboxAvailable(log: (text: string) => void): boolean {
  try {
    findSandboxTool();
    return true;
  } catch (error) {
    log(`figure 4: no sandboxed row: ${(error as Error).message}`);
    return false;
  }
}
