import { MANAGER } from './cold.js';
import type { MetricSummary } from './runs.js';

/** One goal of issue 6, checked against this run's medians. */
export interface TargetResult {
  id: string;
  goal: string;
  /** What was measured, in the goal's terms (a ratio, ms or a count). */
  measured: number;
  unit: 'x' | 'ms' | 'count';
  /** How it was computed, from which medians. */
  basis: string;
  met: boolean;
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

export function checkTargets(metrics: readonly MetricSummary[], servers: { scale: number; slow: number; slowInitMs: number; cores: number }): TargetResult[] {
  const m = mediansOf(metrics);
  const many = `lazy-mcp, ${servers.scale} configured`;
  const ratio = (id: string, goal: string, a: [string, string], b: [string, string], limit: number, atLeast = false): TargetResult => {
    const value = m(...a) / m(...b);
    // What the same ratio is for the bare pipe, where it means something: the limit of the measure here.
    const bare = a[1] === 'lazy-mcp' && b[1] === 'sdk' ? `; the bare pipe: ${(m(a[0], 'bare') / m(...b)).toFixed(2)}×` : '';
    return {
      id,
      goal,
      measured: value,
      unit: 'x',
      basis: `median ${a[0]} of ${a[1]} ÷ median ${b[0]} of ${b[1]}${bare}`,
      met: atLeast ? value >= limit : value <= limit,
    };
  };
  const spawnedMax = maxOf(metrics, 'scale-spawned', many);
  const cachedSpawnedMax = maxOf(metrics, 'list-cached-spawned', 'lazy-mcp');
  return [
    ratio('seq-p50', 'sequential p50 ≤ 1.25× the bare pipe', ['seq-p50', 'lazy-mcp'], ['seq-p50', 'bare'], 1.25),
    ratio('inflight', '64-in-flight calls/s ≥ 1.5× the SDK', ['inflight-rate', 'lazy-mcp'], ['inflight-rate', 'sdk'], 1.5, true),
    ratio('big', '5 MiB round trip ≤ 1.1× the bare pipe', ['big', 'lazy-mcp'], ['big', 'bare'], 1.1),
    ratio('cold', 'cold first call ≤ 1.05× the bare pipe', ['cold', 'lazy-mcp'], ['cold', 'bare'], 1.05),
    {
      id: 'scale-spawned',
      goal: `${servers.scale} lazy servers: 0 spawns at construction`,
      measured: spawnedMax,
      unit: 'count',
      basis: 'largest count over the runs, from status() (a pid, or a state other than idle)',
      met: spawnedMax === 0,
    },
    {
      id: 'scale-construct',
      goal: `${servers.scale} lazy servers: construction < 10 ms`,
      measured: m('scale-construct', many),
      unit: 'ms',
      basis: `median; slowest run ${maxOf(metrics, 'scale-construct', many).toFixed(2)} ms`,
      met: m('scale-construct', many) < 10,
    },
    ratio('scale-first', `${servers.scale} lazy servers: first result ≤ 1.2× a single server's cold call`, ['scale-first', many], ['scale-first', 'lazy-mcp, 1 configured'], 1.2),
    listingTarget(metrics, m, servers),
    {
      id: 'list-cached',
      goal: 'cached listing < 20 ms with 0 spawns',
      measured: m('list-cached', 'lazy-mcp'),
      unit: 'ms',
      basis: `median; slowest run ${maxOf(metrics, 'list-cached', 'lazy-mcp').toFixed(2)} ms; spawns (largest over runs): ${cachedSpawnedMax}`,
      met: m('list-cached', 'lazy-mcp') < 20 && cachedSpawnedMax === 0,
    },
  ];
}

/**
 * The cold listing, with the floor this machine puts under it: the servers' own start-up
 * CPU, spread over every core, plus their initialize delay.
 */
function listingTarget(metrics: readonly MetricSummary[], m: Medians, servers: { slow: number; slowInitMs: number; cores: number }): TargetResult {
  const value = m('list-many', 'lazy-mcp') / m('list-one', 'lazy-mcp');
  const cpu = metrics.find((x) => x.id === 'list-child-cpu')?.summary['lazy-mcp']?.median ?? NaN;
  const floor = (servers.slow * cpu) / servers.cores + servers.slowInitMs;
  return {
    id: 'list-cold',
    goal: `cold listing of ${servers.slow} slow servers ≤ 1.5× one server's start`,
    measured: value,
    unit: 'x',
    basis:
      `median list-many ÷ median list-one, both lazy-mcp; the bare pipe: ${(m('list-many', 'bare') / m('list-one', 'bare')).toFixed(2)}×. ` +
      `Floor here: ${servers.slow} starts × ${cpu.toFixed(0)} ms CPU ÷ ${servers.cores} cores + ${servers.slowInitMs} ms = ${floor.toFixed(0)} ms ` +
      `= ${(floor / m('list-one', 'lazy-mcp')).toFixed(2)}× one start`,
    met: value <= 1.5,
  };
}

/** The ratios the chart shows: each group one measure, bars per client, the goal as a mark. */
export interface ChartGroup {
  title: string;
  bars: { label: string; value: number }[];
  target?: { value: number; label: string };
}

export function chartGroups(metrics: readonly MetricSummary[], servers: { scale: number; slow: number }): ChartGroup[] {
  const m = mediansOf(metrics);
  const vsBare = (id: string, variants: string[]) => variants.map((v) => ({ label: v, value: m(id, v) / m(id, 'bare') }));
  const one = 'lazy-mcp, 1 configured';
  return [
    { title: 'warm sequential call: p50 latency ÷ bare pipe, lower is better', bars: vsBare('seq-p50', ['lazy-mcp', 'sdk']), target: { value: 1.25, label: '≤ 1.25' } },
    {
      title: '64 calls in flight: calls/s ÷ bare pipe, higher is better',
      bars: vsBare('inflight-rate', ['lazy-mcp', 'sdk']),
      target: { value: (1.5 * m('inflight-rate', 'sdk')) / m('inflight-rate', 'bare'), label: '≥ 1.5× SDK' },
    },
    { title: '5 MiB result: round trip ÷ bare pipe, lower is better', bars: vsBare('big', ['lazy-mcp', 'sdk']), target: { value: 1.1, label: '≤ 1.1' } },
    { title: 'cold start + first result ÷ bare pipe, lower is better', bars: vsBare('cold', ['lazy-mcp', MANAGER, 'sdk']), target: { value: 1.05, label: '≤ 1.05' } },
    {
      title: `first result, ${servers.scale} servers configured ÷ 1 configured, lower is better`,
      bars: [
        { label: 'lazy-mcp', value: m('scale-first', `lazy-mcp, ${servers.scale} configured`) / m('scale-first', one) },
        { label: `sdk (connects all ${servers.scale} first)`, value: m('scale-first', `sdk, ${servers.scale} connected in turn`) / m('scale-first', one) },
      ],
      target: { value: 1.2, label: '≤ 1.2' },
    },
    {
      title: `tools of ${servers.slow} slow servers, cold ÷ one server's start, lower is better`,
      bars: ['lazy-mcp', 'sdk', 'bare'].map((v) => ({ label: v === 'lazy-mcp' ? v : `${v} (in parallel)`, value: m('list-many', v) / m('list-one', v) })),
      target: { value: 1.5, label: '≤ 1.5' },
    },
  ];
}
