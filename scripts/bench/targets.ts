import { clusterTargets } from './cluster-targets.js';
import { MANAGER_CACHED, MANAGER_SANDBOXED, MANAGER_UNCACHED } from './cold.js';
import { FLOOR, OWN, SHARED } from './daemon.js';
import { ERA_2026, ERA_LEGACY, HTTP_OURS, HTTP_OURS_2026, HTTP_SDK2 } from './era-http.js';
import { gatewayTargets } from './gateway-targets.js';
import { PLAIN, PRINCIPAL } from './principal.js';
import type { MetricSummary } from './runs.js';
import { FRESH_NO_SCAVENGE, IMPORT_OURS, IMPORT_SDK2, NODE_ALONE, SERVE_FIRST, TOOLS_WARM } from './startup.js';
import { quantile } from './stats.js';

/** One goal of issue 16, checked against this run's medians. */
export interface TargetResult {
  id: string;
  goal: string;
  /** What was measured, in the goal's terms (a ratio, ms, bytes or a count); NaN when not measured. */
  measured: number;
  unit: 'x' | 'ms' | 'count' | 'bytes' | '%';
  /** How it was computed, from which medians, or why it is not measured. */
  basis: string;
  /** Pass/fail; null: reported only (no bound) or not measured in this run. */
  met: boolean | null;
}

/** Medians of one metric by variant; throws when the run did not produce it. */
export type Medians = (metric: string, variant: string) => number;

export function mediansOf(metrics: readonly MetricSummary[]): Medians {
  return (id, variant) => {
    const value = metrics.find((m) => m.id === id)?.summary[variant]?.median;
    if (value === undefined) throw new Error(`no median of ${id} for ${variant}`);
    return value;
  };
}

export function maxOf(metrics: readonly MetricSummary[], id: string, variant: string): number {
  return metrics.find((m) => m.id === id)?.summary[variant]?.max ?? NaN;
}

const has = (metrics: readonly MetricSummary[], id: string) => metrics.some((m) => m.id === id);

/** The goals whose figures this run measured, and a row for each goal it cannot measure yet. */
export function checkTargets(metrics: readonly MetricSummary[], notes: { configured: number; cached: number }): TargetResult[] {
  const m = mediansOf(metrics);
  const mOr = (id: string, variant: string) => metrics.find((x) => x.id === id)?.summary[variant]?.median ?? NaN;
  const out: TargetResult[] = [];
  const ratio = (id: string, goal: string, metric: string, a: string, b: string, limit: number, atLeast: boolean, extra = ''): TargetResult => {
    const value = m(metric, a) / m(metric, b);
    return {
      id,
      goal,
      measured: value,
      unit: 'x',
      basis: `median ${metric} of ${a} ÷ of ${b}${extra}`,
      met: atLeast ? value >= limit : value <= limit,
    };
  };
  if (has(metrics, 'inflight')) {
    out.push(
      ratio('inflight-manager', '64 in flight: manager ≥ 1.0× the bare pipe', 'inflight', 'manager', 'bare', 1, true, `; McpClient: ${(m('inflight', 'McpClient') / m('inflight', 'bare')).toFixed(2)}×`),
      ratio('inflight-session', '64 in flight: session ≥ 0.95× the manager', 'inflight', 'session', 'manager', 0.95, true),
      ratio('inflight-sdk1', '64 in flight: manager ≥ 2× the SDK v1 client', 'inflight', 'manager', 'sdk v1', 2, true),
      ratio('inflight-sdk2', '64 in flight: manager ahead of the SDK v2 client (> 1×)', 'inflight', 'manager', 'sdk v2', 1.0000001, true),
    );
  }
  if (has(metrics, 'seq-p50')) {
    const pair = metrics.find((x) => x.id === 'seq-pair-ratio')?.summary.manager?.median ?? NaN;
    out.push(
      ratio('seq-p50', 'sequential (alternating blocks): manager p50 ≤ 1.15× bare', 'seq-p50', 'manager', 'bare', 1.15, false, `, over all calls; median of the paired block ratios: ${pair.toFixed(2)}×`),
      ratio('seq-p99', 'sequential (alternating blocks): manager p99 ≤ 1.3× bare', 'seq-p99', 'manager', 'bare', 1.3, false, ', over all calls'),
    );
  }
  if (has(metrics, 'daemon-p50')) {
    const procs = `${m('daemon-procs', SHARED)} shared vs ${m('daemon-procs', OWN)} own processes, RSS ${(m('daemon-rss', SHARED) / 1048576).toFixed(0)} vs ${(m('daemon-rss', OWN) / 1048576).toFixed(0)} MiB`;
    out.push(
      ratio('daemon-p50', 'serve through the pool daemon: sequential p50 ≤ 1.3× --no-shared', 'daemon-p50', SHARED, OWN, 1.3, false, `; ${procs}`),
      ratio('daemon-inflight', 'serve through the pool daemon: 64 in flight ≥ 0.7× --no-shared', 'daemon-inflight', SHARED, OWN, 0.7, true),
    );
    if (metrics.some((x) => x.id === 'daemon-p50' && x.summary[FLOOR] !== undefined)) {
      const floor = m('daemon-p50', FLOOR) / m('daemon-p50', OWN);
      out.push({
        ...ratio('daemon-p50-floor', 'serve through the pool daemon: sequential p50 ÷ through a process that only copies bytes (reported)', 'daemon-p50', SHARED, FLOOR, Infinity, false, `; that process alone: ${floor.toFixed(2)}× --no-shared, the least any relay on the path adds`),
        met: null,
      });
    }
  }
  if (has(metrics, 'big')) out.push(ratio('big', '5 MiB result: manager ≤ 1.05× bare', 'big', 'manager', 'bare', 1.05, false));
  if (has(metrics, 'cold')) {
    out.push(
      ratio('cold', 'cold first call: manager (warm cache, known era) ≤ 1.0× bare spawn + handshake + call', 'cold', MANAGER_CACHED, 'bare', 1, false),
    );
    if (metrics.some((x) => x.id === 'cold' && x.summary[MANAGER_SANDBOXED] !== undefined)) {
      out.push(ratio('cold-sandbox', 'cold first call in a sandbox (bwrap): ≤ 1.5× the same server unsandboxed', 'cold', MANAGER_SANDBOXED, MANAGER_UNCACHED, 1.5, false));
    }
  }
  if (has(metrics, 'construct')) {
    const spawned = maxOf(metrics, 'construct-spawned', 'manager');
    out.push(
      {
        id: 'construct',
        goal: `${notes.configured} servers configured: construction < 10 ms`,
        measured: m('construct', 'manager'),
        unit: 'ms',
        basis: `median wall time; slowest run ${maxOf(metrics, 'construct', 'manager').toFixed(2)} ms; host CPU time ${m('construct-cpu', 'manager').toFixed(2)} ms (median)`,
        met: m('construct', 'manager') < 10,
      },
      { id: 'construct-spawned', goal: `${notes.configured} servers configured: 0 spawns`, measured: spawned, unit: 'count', basis: 'largest count over the runs, from status()', met: spawned === 0 },
    );
    const cachedSpawned = maxOf(metrics, 'cached-spawned', 'manager');
    out.push({
      id: 'cached-list',
      goal: `${notes.cached} servers listed from a warm cache, fresh manager: < 20 ms, 0 spawns`,
      measured: m('cached-list', 'manager'),
      unit: 'ms',
      basis: `median wall time; slowest run ${maxOf(metrics, 'cached-list', 'manager').toFixed(2)} ms; host CPU time ${m('cached-cpu', 'manager').toFixed(2)} ms (median); spawns (largest over runs): ${cachedSpawned}`,
      met: m('cached-list', 'manager') < 20 && cachedSpawned === 0,
    });
    const bytes = (id: string, goal: string, extra = ''): TargetResult => ({
      id,
      goal,
      measured: m(id, 'manager'),
      unit: 'bytes',
      basis: `median heapUsed growth after a full GC ÷ servers${extra}`,
      met: null,
    });
    out.push(
      bytes('idle-bytes', 'host memory per configured idle server (reported)'),
      bytes('live-heap', 'host memory per live connection (reported)', `; the bare pipe: ${Math.round(m('live-heap', 'bare'))} B; RSS per connection: ${Math.round(m('live-rss', 'manager'))} B (bare ${Math.round(m('live-rss', 'bare'))} B)`),
    );
  }
  if (has(metrics, 'search-index')) {
    out.push(
      { id: 'search-index', goal: 'tool search: 10k tools indexed < 500 ms', measured: m('search-index', 'ToolSearchIndex'), unit: 'ms', basis: `median wall time, generated tools; host CPU time ${m('search-index-cpu', 'ToolSearchIndex').toFixed(0)} ms`, met: m('search-index', 'ToolSearchIndex') < 500 },
      { id: 'search-query', goal: 'tool search: query p50 < 1 ms', measured: m('search-query', 'ToolSearchIndex'), unit: 'ms', basis: 'median over runs of the p50 of 200 queries', met: m('search-query', 'ToolSearchIndex') < 1 },
    );
  }
  if (has(metrics, 'era-inflight')) {
    const cost = 1 - m('era-inflight', ERA_2026) / m('era-inflight', ERA_LEGACY);
    // Reported: the SDK v2 server's own 2026 path is the cost here; the target is figure 13's (gateway-targets.ts).
    out.push({
      id: 'era-meta',
      goal: '2026 era: throughput cost vs the legacy era against the SDK v2 server (reported; the target is against our gateway)',
      measured: cost * 100,
      unit: '%',
      basis: `1 − median era-inflight of ${ERA_2026} ÷ of ${ERA_LEGACY} (${(m('era-inflight', ERA_2026) / m('era-inflight', ERA_LEGACY)).toFixed(2)}×), 64 in flight, stdio; host CPU per call ${m('era-inflight-cpu', ERA_2026).toFixed(0)} vs ${m('era-inflight-cpu', ERA_LEGACY).toFixed(0)} µs`,
      met: null,
    });
  } else out.push(notMeasured('era-meta', '2026 era: throughput cost vs the legacy era against the SDK v2 server (reported)', 'not measured: run without the era group'));
  if (has(metrics, 'http-inflight')) {
    out.push(
      ratio('http', 'HTTP: our client ≥ 1.5× the SDK v2 client at 64 in flight, keep-alive reused', 'http-inflight', HTTP_OURS, HTTP_SDK2, 1.5, true,
        `, both in the legacy era; ${HTTP_OURS_2026}: ${(mOr('http-inflight', HTTP_OURS_2026) / m('http-inflight', HTTP_SDK2)).toFixed(2)}×`),
    );
  } else out.push(notMeasured('http', 'HTTP: our client ≥ 1.5× the SDK v2 client at 64 in flight, keep-alive reused', 'not measured: run without the http group'));
  if (has(metrics, 'metrics-read')) {
    out.push({ id: 'metrics', goal: 'cost of reading manager.metrics()', measured: m('metrics-read', 'manager') / 1000, unit: 'ms', basis: 'p50 of 2000 reads; the counting per call is inside figure 1', met: null });
  } else {
    out.push(notMeasured('metrics', 'cost of manager.metrics()', 'not measured: manager.metrics() is not wired on this build (helper ops is wiring it); the hook is scripts/bench/metrics-cost.ts'));
  }
  out.push(...gatewayTargets(metrics));
  if (has(metrics, 'startup')) out.push(...startupTargets(metrics));
  else out.push(notMeasured('startup-import', 'import of the package ≤ 2.5× node -e 0', 'not measured: run without the startup group'));
  out.push(...clusterTargets(metrics));
  if (has(metrics, 'principal-inflight')) {
    out.push({
      id: 'principal',
      goal: "a principal's session against a plain one (issue 31): 64 in flight",
      measured: m('principal-inflight', PRINCIPAL) / m('principal-inflight', PLAIN),
      unit: 'x',
      basis: `median principal-inflight of ${PRINCIPAL} ÷ of ${PLAIN}; sequential p50 ${m('principal-p50', PRINCIPAL).toFixed(0)} vs ${m('principal-p50', PLAIN).toFixed(0)} µs (${(m('principal-p50', PRINCIPAL) / m('principal-p50', PLAIN)).toFixed(2)}×)`,
      met: null,
    });
  }
  return out;
}

/**
 * Issue 34's start-up goals: ratios of medians taken side by side, with each side's
 * min–max and the median of the ratios paired round by round (the machine's speed drifts
 * less within a round than across the run).
 */
function startupTargets(metrics: readonly MetricSummary[]): TargetResult[] {
  const metric = metrics.find((x) => x.id === 'startup')!;
  const spread = (variant: string) => {
    const s = metric.summary[variant];
    return `${variant} ${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
  };
  const paired = (a: string, b: string) => {
    const ra = metric.runs[a] ?? [];
    const rb = metric.runs[b] ?? [];
    const ratios = ra.slice(0, rb.length).map((v, i) => v / rb[i]).sort((x, y) => x - y);
    return { median: quantile(ratios, 0.5), min: ratios[0], max: ratios[ratios.length - 1] };
  };
  const goal = (id: string, text: string, a: string, b: string, limit: number): TargetResult => {
    const value = metric.summary[a].median / metric.summary[b].median;
    const p = paired(a, b);
    return {
      id,
      goal: text,
      measured: value,
      unit: 'x',
      basis: `median ÷ median: ${spread(a)} ÷ ${spread(b)}; paired by round: ${p.median.toFixed(2)}× (${p.min.toFixed(2)}–${p.max.toFixed(2)})`,
      met: value <= limit,
    };
  };
  return [
    goal('startup-import', 'import of the package ≤ 2.5× node -e 0', IMPORT_OURS, NODE_ALONE, 2.5),
    goal('startup-import-sdk2', "import of the package ≤ 0.4× the SDK v2 client's import", IMPORT_OURS, IMPORT_SDK2, 0.4),
    goal('startup-serve', "lazy-mcp serve's first answer (stdio, warm cache) ≤ 3× node -e 0", SERVE_FIRST, NODE_ALONE, 3),
    goal('startup-tools', 'lazy-mcp tools, warm cache ≤ 4× node -e 0', TOOLS_WARM, NODE_ALONE, 4),
    ...constructFresh(metrics),
  ];
}

/** Issue 34 item 5: the first construction in a fresh process, beside figure 5's warmed one. */
function constructFresh(metrics: readonly MetricSummary[]): TargetResult[] {
  const fresh = metrics.find((x) => x.id === 'construct-fresh')?.summary.manager;
  if (!fresh) return [];
  const warmed = metrics.find((x) => x.id === 'construct')?.summary.manager?.median;
  const unscavenged = metrics.find((x) => x.id === 'construct-fresh')?.summary[FRESH_NO_SCAVENGE]?.median;
  return [
    {
      id: 'construct-fresh',
      goal: `${metrics.find((x) => x.id === 'construct-fresh')!.label.split(':')[0]}: construction in a fresh process < 10 ms`,
      measured: fresh.median,
      unit: 'ms',
      basis:
        `median wall time of the first fromConfig after the import (${fresh.min.toFixed(2)}–${fresh.max.toFixed(2)} ms)` +
        `${unscavenged === undefined ? '' : `; with the young generation pre-sized, so that none of the process's first scavenges falls in it: ${unscavenged.toFixed(2)} ms`}` +
        `${warmed === undefined ? '' : `; warmed (figure 5): ${warmed.toFixed(2)} ms`}`,
      met: fresh.median < 10,
    },
  ];
}

function notMeasured(id: string, goal: string, basis: string): TargetResult {
  return { id, goal, measured: NaN, unit: 'x', basis, met: null };
}

/** The ratios the chart shows: each group one measure, bars per client, the goal as a mark. */
export interface ChartGroup {
  title: string;
  bars: { label: string; value: number }[];
  target?: { value: number; label: string };
}

export function chartGroups(metrics: readonly MetricSummary[]): ChartGroup[] {
  const m = mediansOf(metrics);
  const vsBare = (id: string, variants: string[]) => variants.map((v) => ({ label: v, value: m(id, v) / m(id, 'bare') }));
  const groups: ChartGroup[] = [];
  if (has(metrics, 'inflight')) {
    groups.push({
      title: '64 calls in flight: calls/s ÷ bare pipe, higher is better',
      bars: vsBare('inflight', ['McpClient', 'manager', 'session', 'sdk v1', 'sdk v2']),
      target: { value: 1, label: 'manager ≥ 1' },
    });
  }
  if (has(metrics, 'seq-p50')) {
    groups.push(
      { title: 'sequential call p50 (alternating blocks) ÷ bare pipe, lower is better', bars: vsBare('seq-p50', ['manager', 'session', 'McpClient']), target: { value: 1.15, label: '≤ 1.15' } },
      { title: 'sequential call p99 (alternating blocks) ÷ bare pipe, lower is better', bars: vsBare('seq-p99', ['manager', 'session', 'McpClient']), target: { value: 1.3, label: '≤ 1.3' } },
    );
  }
  if (has(metrics, 'big')) groups.push({ title: '5 MiB result: round trip ÷ bare pipe, lower is better', bars: vsBare('big', ['manager', 'session', 'McpClient']), target: { value: 1.05, label: '≤ 1.05' } });
  if (has(metrics, 'cold')) {
    groups.push({ title: 'cold first call ÷ bare spawn + handshake + call, lower is better', bars: vsBare('cold', [MANAGER_CACHED, 'manager, no cache', 'McpClient']), target: { value: 1, label: '≤ 1.0' } });
  }
  return groups;
}
