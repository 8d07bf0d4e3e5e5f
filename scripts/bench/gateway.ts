import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { client, type Conn } from './clients.js';
import { eraConn, type GroupChild, sameBytesConn, httpClient, mcpHub, mcpProxy, serveHttp, serveStdio, workDir, writeConfig } from './gateway-procs.js';
import { placed } from './pin.js';
import type { Placement } from './placement.js';
import type { Plan } from './plan.js';
import { cpuMs, rssKiB, sleep } from './procs.js';
import { alternate, Figure, type Metric } from './runs.js';
import { fixtureServer, type ServerSpec } from './setup.js';
import { now, quantile, since } from './stats.js';
import { closeAll, inFlightCpu, inFlightFor } from './throughput.js';

/** Variant names of figure 12 (the gateway and its peers) and figure 13 (the eras against our gateway). */
export const GW_DIRECT = 'direct (McpClient, stdio)';
export const GW_STDIO = 'serve, stdio, legacy';
export const GW_STDIO_2026 = 'serve, stdio, 2026';
export const GW_HTTP = 'serve --http, legacy';
export const GW_HTTP_2026 = 'serve --http, 2026';
export const PROXY = 'mcp-proxy, legacy';
export const PROXY_2026 = 'mcp-proxy, 2026';
export const HUB = 'mcp-hub /mcp (HTTP+SSE, legacy)';
export const OURS = 'lazy-mcp serve';
export const PROXY_ANY = 'mcp-proxy';
export const HUB_ANY = 'mcp-hub';
export const ERA_GW_2026 = 'McpClient, 2026 era';
export const ERA_GW_LEGACY = 'McpClient, legacy era';
export const ERA_GW_SAME_BYTES = 'McpClient, legacy era carrying the 2026 bytes';

const ARGS = { text: 'hello' };
/** Public names of the echo tool: our gateway prefixes `mcp__<server>__`, mcp-hub `<server>__`. */
const ours = (server: string) => (tool: string) => `mcp__${server}__${tool}`;
const hubs = (server: string) => (tool: string) => `${server}__${tool}`;
const same = (tool: string) => tool;

/** Every target of figure 12, each on its own gateway process (and its own echo server child). */
async function openTargets(config: string, echo: ServerSpec, hubConfig: string, where: Placement, log: (text: string) => void): Promise<Map<string, Conn>> {
  const conns = new Map<string, Conn>();
  const add = async (name: string, open: () => Promise<Conn>) => {
    try {
      conns.set(name, await placed(where.children, open, where.host));
    } catch (error) {
      await closeAll(conns);
      throw error;
    }
  };
  await add(GW_DIRECT, () => client.connect(echo));
  await add(GW_STDIO, () => eraConn(() => serveStdio(config, 'legacy'), 'legacy', GW_STDIO, ours('echo')));
  await add(GW_STDIO_2026, () => eraConn(() => serveStdio(config, '2026'), '2026', GW_STDIO_2026, ours('echo')));
  for (const [name, era] of [[GW_HTTP, 'legacy'], [GW_HTTP_2026, '2026']] as const) {
    await add(name, async () => {
      const { proc, url } = await serveHttp(config);
      return eraConn(() => httpClient(url, 'http', era), era, name, ours('echo'), () => proc.stop());
    });
  }
  for (const [name, era] of [[PROXY, 'legacy'], [PROXY_2026, '2026']] as const) {
    await add(name, async () => {
      const { proc, url } = await mcpProxy(echo);
      return eraConn(() => httpClient(url, 'http', era), era, name, same, () => proc.stop());
    });
  }
  await add(HUB, async () => {
    const { proc, url } = await mcpHub(hubConfig, 1);
    return eraConn(() => httpClient(url, 'sse', 'legacy'), 'legacy', HUB, hubs('echo'), () => proc.stop());
  });
  log(`figure 12: ${conns.size} targets connected`);
  return conns;
}

/**
 * Figure 12: the gateway in the bench. The same echo server called directly and through
 * `lazy-mcp serve` (stdio and HTTP, both eras), `mcp-proxy` (both eras) and `mcp-hub`
 * (its MCP endpoint, HTTP+SSE), every target alternating run by run: calls/s at 64 in
 * flight with the client's host CPU per call, and sequential p50/p99 over time-bounded
 * blocks. Then memory per live backend, and `tools/list` of 20 servers from a warm cache.
 */
export async function gatewayFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const figure = new Figure(12)
    .define('gw-inflight', `one echo server through a gateway: echo calls, ${plan.inflight} in flight`, 'calls/s', 'higher')
    .define('gw-inflight-cpu', 'one echo server through a gateway: host (client) CPU time per call', 'µs', 'lower')
    .define('gw-p50', 'one echo server through a gateway: sequential p50 over all blocks', 'µs', 'lower')
    .define('gw-p99', 'one echo server through a gateway: sequential p99 over all blocks', 'µs', 'lower')
    .define('gw-rss', `gateway process RSS with ${plan.gatewayBackends} backends live (mcp-proxy: one process, one backend)`, 'bytes', 'lower')
    .define('gw-rss-backend', 'gateway RSS per live backend (mcp-proxy: its whole process, one per backend)', 'bytes', 'lower')
    .define('gw-list', `tools/list of ${plan.gatewayListServers} configured servers through a fresh gateway: the request alone`, 'ms', 'lower')
    .define('gw-list-start', `tools/list of ${plan.gatewayListServers} configured servers: gateway start → the listing answered`, 'ms', 'lower')
    .define('gw-list-spawns', `tools/list of ${plan.gatewayListServers} configured servers: backend processes started`, 'count', 'lower');
  const dir = workDir('gateway');
  const echo = fixtureServer('bench-echo-server.mjs');
  const config = writeConfig(dir, 'one.json', { echo });
  const conns = await openTargets(config, echo, config, where, log);
  try {
    for (const conn of conns.values()) {
      await inFlightFor(conn, plan.gatewayWarmSeconds, plan.inflight); // JIT warm-up, time-bounded: the peers answer tens of calls/s here
      await block(conn, 20, plan.gatewayWarmSeconds);
    }
    log(`figure 12: ${conns.size} targets × ${plan.gatewayRounds} rounds of ${plan.gatewaySeconds} s at ${plan.inflight} in flight + ≤ ${plan.gatewayBlockCalls} sequential calls`);
    const latencies = new Map<string, number[]>([...conns.keys()].map((name) => [name, []]));
    await alternate(
      plan.gatewayRounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const { rate, cpuPerCall } = await inFlightCpu(conn, plan.gatewaySeconds, plan.inflight);
          figure.record('gw-inflight', name, rate);
          figure.record('gw-inflight-cpu', name, cpuPerCall);
          latencies.get(name)!.push(...(await block(conn, plan.gatewayBlockCalls, plan.gatewayBlockSeconds)));
        },
      })),
      log,
    );
    for (const [name, all] of latencies) {
      all.sort((a, b) => a - b);
      figure.record('gw-p50', name, quantile(all, 0.5));
      figure.record('gw-p99', name, quantile(all, 0.99));
    }
  } finally {
    await closeAll(conns);
  }
  await memoryPerBackend(figure, plan, dir, where, log);
  await listFromCache(figure, plan, dir, where, log);
  return figure.list();
}

/** Up to `count` sequential calls, no longer than about `seconds`: each one's latency in µs. */
async function block(conn: Conn, count: number, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = now() + BigInt(Math.round(seconds * 1e9));
  while (out.length < count && process.hrtime.bigint() < end) {
    const t = now();
    await conn.call('echo', ARGS);
    out.push(since(t) * 1000);
  }
  return out;
}

/** RSS of `pid` in bytes, read after the gateway has had a moment to settle. */
async function rssAfterSettle(pid: number): Promise<number> {
  await sleep(200);
  return rssKiB(pid) * 1024;
}

/**
 * Memory per live backend: RSS of the gateway process with one backend live (its code
 * paths warm) and then with `gatewayBackends` live; the growth ÷ the backends added.
 * mcp-hub starts every configured server at once, so it is two processes (1 and N
 * servers); mcp-proxy serves one server, so its whole process is the cost of a backend.
 */
async function memoryPerBackend(figure: Figure, plan: Plan, dir: string, where: Placement, log: (text: string) => void): Promise<void> {
  const n = plan.gatewayBackends;
  const servers = Object.fromEntries(Array.from({ length: n }, (_, i) => [`e${i}`, fixtureServer('bench-echo-server.mjs')]));
  const many = writeConfig(dir, `many-${n}.json`, servers);
  const single = writeConfig(dir, 'single.json', { e0: servers.e0 });
  log(`figure 12: memory with ${n} backends live, ${plan.gatewayMemoryRounds} round(s)`);
  for (let round = 0; round < plan.gatewayMemoryRounds; round++) {
    const c = await placed(where.children, () => serveStdio(many, 'legacy'), where.host);
    try {
      await c.callTool('mcp__e0__echo', ARGS);
      const one = await rssAfterSettle(c.pid);
      for (let i = 1; i < n; i++) await c.callTool(`mcp__e${i}__echo`, ARGS);
      const all = await rssAfterSettle(c.pid);
      figure.record('gw-rss', OURS, all);
      figure.record('gw-rss-backend', OURS, (all - one) / (n - 1));
    } finally {
      await c.close();
    }
    const hubRss = async (config: string, count: number): Promise<number> => {
      const { proc, url } = await placed(where.children, () => mcpHub(config, count), where.host);
      try {
        const hub = await httpClient(url, 'sse', 'legacy');
        try {
          for (let i = 0; i < count; i++) await hub.callTool(`e${i}__echo`, ARGS);
        } finally {
          await hub.close();
        }
        return await rssAfterSettle(proc.pid);
      } finally {
        await proc.stop();
      }
    };
    const hubOne = await hubRss(single, 1);
    const hubAll = await hubRss(many, n);
    figure.record('gw-rss', HUB_ANY, hubAll);
    figure.record('gw-rss-backend', HUB_ANY, (hubAll - hubOne) / (n - 1));
    const { proc, url } = await placed(where.children, () => mcpProxy(servers.e0), where.host);
    try {
      const p = await httpClient(url, 'http', 'legacy');
      try {
        await p.callTool('echo', ARGS);
      } finally {
        await p.close();
      }
      const rss = await rssAfterSettle(proc.pid);
      figure.record('gw-rss', PROXY_ANY, rss);
      figure.record('gw-rss-backend', PROXY_ANY, rss);
    } finally {
      await proc.stop();
    }
  }
}

/**
 * `tools/list` of `gatewayListServers` configured servers: a cache warmed by one
 * `lazy-mcp serve --cache-dir`, then fresh gateways listing from it; every backend runs
 * through `counts-starts.mjs`, which notes each start in a file, so the spawns are
 * counted, not inferred. mcp-hub keeps no listing cache: it starts every server, once.
 */
async function listFromCache(figure: Figure, plan: Plan, dir: string, where: Placement, log: (text: string) => void): Promise<void> {
  const n = plan.gatewayListServers;
  const starts = join(dir, 'starts.txt');
  const counted = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0);
  const spec = (i: number): ServerSpec => {
    const base = fixtureServer('counts-starts.mjs', starts, 'bench-echo-server.mjs');
    return { ...base, env: { ...base.env, BENCH_SLOT: String(i) } }; // twenty different servers, twenty cache entries
  };
  const config = writeConfig(dir, `list-${n}.json`, Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, spec(i)])));
  const cacheDir = join(dir, 'cache');
  const expected = 2 * n; // echo and big, per server
  log(`figure 12: tools/list of ${n} servers, warming the cache, then ${plan.gatewayListRounds} fresh gateway(s)`);
  const warm = await placed(where.children, () => serveStdio(config, 'legacy', ['--cache-dir', cacheDir]), where.host);
  try {
    const tools = await warm.listTools();
    if (tools.length !== expected) throw new Error(`figure 12: the warming listing has ${tools.length} tools, not ${expected}`);
  } finally {
    await warm.close();
  }
  if (counted() !== n) throw new Error(`figure 12: warming the cache started ${counted()} servers, not ${n}`);
  for (let round = 0; round < plan.gatewayListRounds; round++) {
    const before = counted();
    const t0 = now();
    const c = await placed(where.children, () => serveStdio(config, 'legacy', ['--cache-dir', cacheDir]), where.host);
    try {
      const t1 = now();
      const tools = await c.listTools();
      figure.record('gw-list', OURS, since(t1));
      figure.record('gw-list-start', OURS, since(t0));
      if (tools.length !== expected) throw new Error(`figure 12: the cached listing has ${tools.length} tools, not ${expected}`);
    } finally {
      await c.close();
    }
    figure.record('gw-list-spawns', OURS, counted() - before);
  }
  const before = counted();
  const t0 = now();
  let hub: { proc: GroupChild; url: string } | undefined;
  try {
    hub = await placed(where.children, () => mcpHub(config, n), where.host);
    const c = await httpClient(hub.url, 'sse', 'legacy');
    try {
      const t1 = now();
      const tools = await c.listTools();
      figure.record('gw-list', HUB_ANY, since(t1));
      figure.record('gw-list-start', HUB_ANY, since(t0));
      if (tools.length !== expected) throw new Error(`figure 12: mcp-hub listed ${tools.length} tools, not ${expected}`);
    } finally {
      await c.close();
    }
  } finally {
    await hub?.proc.stop();
  }
  figure.record('gw-list-spawns', HUB_ANY, counted() - before);
}

/**
 * Figure 13: the 2026 era's cost against a fast 2026 server, our own gateway (`lazy-mcp
 * serve --no-shared` on stdio fronting the echo server, one process per client), beside
 * the legacy era, 64 in flight: calls/s, the client's host CPU time per call (the
 * target), and the gateway process's CPU time per call. A third client, the legacy era
 * carrying the 2026 bytes (`sameBytesConn`), splits the ratio into what the 2026 era's
 * client code costs and what its bytes on the wire cost.
 */
export async function eraGatewayFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const figure = new Figure(13)
    .define('era-gw-inflight', `our gateway as the server (stdio): echo calls, ${plan.inflight} in flight`, 'calls/s', 'higher')
    .define('era-gw-cpu', 'our gateway as the server (stdio): host (client) CPU time per call', 'µs', 'lower')
    .define('era-gw-server-cpu', 'our gateway as the server (stdio): the gateway process CPU time per call', 'µs', 'lower');
  const dir = workDir('era-gateway');
  const config = writeConfig(dir, 'one.json', { echo: fixtureServer('bench-echo-server.mjs') });
  const conns = new Map<string, Conn>();
  try {
    conns.set(ERA_GW_2026, await placed(where.children, () => eraConn(() => serveStdio(config, '2026'), '2026', ERA_GW_2026, ours('echo')), where.host));
    conns.set(ERA_GW_LEGACY, await placed(where.children, () => eraConn(() => serveStdio(config, 'legacy'), 'legacy', ERA_GW_LEGACY, ours('echo')), where.host));
    conns.set(ERA_GW_SAME_BYTES, await placed(where.children, () => sameBytesConn(() => serveStdio(config, 'legacy'), ours('echo')), where.host));
    for (const conn of conns.values()) await inFlightFor(conn, plan.gatewayWarmSeconds * 2, plan.inflight);
    log(`figure 13: the 2026 era beside the legacy era against our gateway, ${plan.rounds} runs each`);
    await alternate(
      plan.rounds,
      [...conns].map(([name, conn]) => ({
        name,
        run: async () => {
          const server = cpuMs(conn.pid);
          const { calls, rate, cpuPerCall } = await inFlightCpu(conn, plan.inflightSeconds, plan.inflight);
          figure.record('era-gw-inflight', name, rate);
          figure.record('era-gw-cpu', name, cpuPerCall);
          figure.record('era-gw-server-cpu', name, ((cpuMs(conn.pid) - server) * 1000) / Math.max(1, calls));
        },
      })),
      log,
    );
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}
