import { ERA_GW_2026, ERA_GW_LEGACY, ERA_GW_SAME_BYTES, GW_DIRECT, GW_HTTP, GW_HTTP_2026, GW_STDIO, GW_STDIO_2026, HUB, HUB_ANY, OURS, PROXY, PROXY_2026, PROXY_ANY } from './gateway.js';
import type { MetricSummary } from './runs.js';
import type { TargetResult } from './targets.js';

const TARGETS_12 = [GW_STDIO, GW_STDIO_2026, GW_HTTP, GW_HTTP_2026, PROXY, PROXY_2026, HUB];

/**
 * Issue 34 items 3 and 4: the gateway beside the echo server called directly and beside
 * its peers (reported: no bound but the listing's 0 spawns), and the 2026 era's client
 * cost against our own gateway (≤ 5% more host CPU per call than the legacy era).
 */
export function gatewayTargets(metrics: readonly MetricSummary[]): TargetResult[] {
  const median = (id: string, variant: string) => metrics.find((x) => x.id === id)?.summary[variant]?.median ?? NaN;
  const max = (id: string, variant: string) => metrics.find((x) => x.id === id)?.summary[variant]?.max ?? NaN;
  const has = (id: string) => metrics.some((m) => m.id === id);
  const out: TargetResult[] = [];
  if (has('gw-inflight')) {
    const vs = (id: string, digits = 2) =>
      TARGETS_12.map((v) => `${v} ${(median(id, v) / median(id, GW_DIRECT)).toFixed(digits)}×`).join('; ');
    const abs = (id: string, unit: string) => TARGETS_12.map((v) => `${v} ${Math.round(median(id, v))}`).join(', ') + ` ${unit}`;
    out.push(
      {
        id: 'gw-inflight',
        goal: 'gateway: calls/s at 64 in flight through lazy-mcp serve (stdio) ÷ the echo server called directly (reported)',
        measured: median('gw-inflight', GW_STDIO) / median('gw-inflight', GW_DIRECT),
        unit: 'x',
        basis: `median gw-inflight ÷ ${GW_DIRECT} (${Math.round(median('gw-inflight', GW_DIRECT))} calls/s): ${vs('gw-inflight')}`,
        met: null,
      },
      {
        id: 'gw-seq',
        goal: 'gateway: sequential p50 through lazy-mcp serve (stdio) ÷ the echo server called directly (reported)',
        measured: median('gw-p50', GW_STDIO) / median('gw-p50', GW_DIRECT),
        unit: 'x',
        basis: `p50 over all blocks, ÷ ${GW_DIRECT} (${Math.round(median('gw-p50', GW_DIRECT))} µs): ${vs('gw-p50')}; p99: ${abs('gw-p99', 'µs')} (direct ${Math.round(median('gw-p99', GW_DIRECT))} µs)`,
        met: null,
      },
      {
        id: 'gw-http-peers',
        goal: 'gateway over HTTP: lazy-mcp serve --http ÷ mcp-proxy, calls/s at 64 in flight, legacy era (reported)',
        measured: median('gw-inflight', GW_HTTP) / median('gw-inflight', PROXY),
        unit: 'x',
        basis:
          `the same client (McpClient) for every HTTP target; 2026 era: ${(median('gw-inflight', GW_HTTP_2026) / median('gw-inflight', PROXY_2026)).toFixed(2)}×; ` +
          `÷ mcp-hub (HTTP+SSE, the only transport of its MCP endpoint; no 2026 era): ${(median('gw-inflight', GW_HTTP) / median('gw-inflight', HUB)).toFixed(2)}×; ` +
          `sequential p50 ÷ mcp-proxy: ${(median('gw-p50', GW_HTTP) / median('gw-p50', PROXY)).toFixed(2)}×, ÷ mcp-hub: ${(median('gw-p50', GW_HTTP) / median('gw-p50', HUB)).toFixed(2)}×`,
        met: null,
      },
    );
  }
  if (has('gw-rss-backend')) {
    const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
    out.push({
      id: 'gw-memory',
      goal: 'gateway: RSS per live backend (reported)',
      measured: median('gw-rss-backend', OURS),
      unit: 'bytes',
      basis:
        `lazy-mcp serve: RSS growth from 1 to N backends live ÷ (N − 1), whole process ${mib(median('gw-rss', OURS))}; ` +
        `mcp-hub (starts every server): ${Math.round(median('gw-rss-backend', HUB_ANY)).toLocaleString('en-US')} B, whole process ${mib(median('gw-rss', HUB_ANY))}; ` +
        `mcp-proxy (one server per process): ${mib(median('gw-rss-backend', PROXY_ANY))} per backend`,
      met: null,
    });
  }
  if (has('gw-list')) {
    const spawns = max('gw-list-spawns', OURS);
    out.push({
      id: 'gw-list',
      goal: `tools/list of ${metrics.find((x) => x.id === 'gw-list')!.label.match(/of (\d+)/)?.[1] ?? '?'} configured servers through lazy-mcp serve from a warm cache: 0 spawns`,
      measured: spawns,
      unit: 'count',
      basis:
        `backend starts counted by the fixture (largest over the runs); the request ${median('gw-list', OURS).toFixed(1)} ms, gateway start → listing ${median('gw-list-start', OURS).toFixed(0)} ms; ` +
        `mcp-hub (no listing cache): ${max('gw-list-spawns', HUB_ANY)} spawns, start → listing ${median('gw-list-start', HUB_ANY).toFixed(0)} ms, the request ${median('gw-list', HUB_ANY).toFixed(1)} ms; mcp-proxy: one server only`,
      met: spawns === 0,
    });
  } else out.push(notMeasured('gw-list', 'tools/list of 20 configured servers through lazy-mcp serve from a warm cache: 0 spawns', 'not measured: run without the gateway group'));
  if (has('era-gw-cpu')) {
    const ratio = median('era-gw-cpu', ERA_GW_2026) / median('era-gw-cpu', ERA_GW_LEGACY);
    out.push({
      id: 'era-client-cpu',
      goal: '2026 era: the client costs ≤ 5% more host CPU per call than the legacy era (our gateway as the server, stdio)',
      measured: ratio,
      unit: 'x',
      basis:
        `median era-gw-cpu of ${ERA_GW_2026} ÷ of ${ERA_GW_LEGACY} (${median('era-gw-cpu', ERA_GW_2026).toFixed(1)} ÷ ${median('era-gw-cpu', ERA_GW_LEGACY).toFixed(1)} µs), 64 in flight; ` +
        `calls/s 2026 ÷ legacy ${(median('era-gw-inflight', ERA_GW_2026) / median('era-gw-inflight', ERA_GW_LEGACY)).toFixed(2)}×; ` +
        `the gateway's own CPU per call ${median('era-gw-server-cpu', ERA_GW_2026).toFixed(0)} vs ${median('era-gw-server-cpu', ERA_GW_LEGACY).toFixed(0)} µs; ` +
        `of the ratio, the 2026 era's client code ${(median('era-gw-cpu', ERA_GW_2026) / median('era-gw-cpu', ERA_GW_SAME_BYTES)).toFixed(2)}× ` +
        `(÷ ${ERA_GW_SAME_BYTES}: a 2026 call's bytes both ways, through the legacy era's code) and the bytes on the wire ` +
        `${(median('era-gw-cpu', ERA_GW_SAME_BYTES) / median('era-gw-cpu', ERA_GW_LEGACY)).toFixed(2)}× (a 2026 request and its answer are ~2.2× the bytes)`,
      met: ratio <= 1.05,
    });
  } else out.push(notMeasured('era-client-cpu', '2026 era: the client costs ≤ 5% more host CPU per call than the legacy era (our gateway as the server, stdio)', 'not measured: run without the gateway group'));
  return out;
}

function notMeasured(id: string, goal: string, basis: string): TargetResult {
  return { id, goal, measured: NaN, unit: 'x', basis, met: null };
}

/** What figures 12 and 13 run, for the notes of RESULTS.md. */
export const GATEWAY_NOTES = [
  '- **Gateway** (figure 12, issue 34): the echo server called directly (`McpClient` on stdio) and through `lazy-mcp serve`',
  '  (`--no-shared` on stdio; `--http` on 127.0.0.1; both eras), through `mcp-proxy` (its Streamable HTTP endpoint, both eras',
  '  it serves, upstream on stdio in the legacy era) and through `mcp-hub` (its MCP endpoint `/mcp`, which is the HTTP+SSE',
  '  transport of 2024-11-05 speaking 2025-06-18: no 2026 era). One gateway process per target, the gateways and their',
  '  backends on the last CPU, the client (`McpClient` for every target) on CPU 0, the targets alternating run by run;',
  '  sequential blocks are bounded in time, as the peers answer tens of calls/s on this machine. Memory: the gateway\'s RSS',
  '  with 1 and with N backends live (mcp-hub: two processes, as it starts every server at once; mcp-proxy serves one',
  '  server per process). Listing: every backend runs through `counts-starts.mjs`, so starts are counted; a cache warmed by',
  '  one `serve --cache-dir`, then fresh gateways. Both peers run on Node 20 (no `engines` field); mcp-hub is given a HOME',
  '  of its own and a fresh marketplace catalog so that it fetches nothing from the network.',
  '- **2026 era against a fast server** (figure 13): `McpClient` in each era against its own `lazy-mcp serve --no-shared`',
  '  (stdio) fronting the echo server; the target is the client\'s host CPU time per call, 2026 ÷ legacy. Figure 8\'s row',
  '  (against the SDK v2 server, whose own 2026 path is the slow side) is kept as reported. A third client, the legacy era',
  '  carrying the 2026 envelope in each call\'s `_meta` (answered in the 2026 shape), sends and reads the bytes of a 2026',
  '  call through the legacy era\'s code: it splits the ratio into the 2026 era\'s own client code and the bytes on the wire.',
];
