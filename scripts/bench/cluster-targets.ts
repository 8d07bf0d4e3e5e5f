import { DEATH_SEEN_WITHIN_MS } from '../../src/share/cluster/membership.js';
import { CLUSTER_OFF, CLUSTER_ON, OFF_OWNER, ON_OWNER } from './cluster.js';
import type { MetricSummary } from './runs.js';
import type { TargetResult } from './targets.js';

const GOALS = {
  procs: 'cluster of 3 gateways: one server process per server in all, instead of one per member',
  inflight: "cluster: a call on a member that is not the owner, 64 in flight ≥ 0.5× the owner's calls/s",
  p50: 'cluster: a call on a member that is not the owner, sequential p50 ÷ on the owner (reported)',
  death: "cluster: an owner's SIGKILL seen by every other member ≤ 3 s",
  failover: "cluster: an owner's SIGKILL → its server answers again on the next owner (reported)",
};

/** Issue 30's goals (figure 14); rows that say why when the figure did not run. */
export function clusterTargets(metrics: readonly MetricSummary[]): TargetResult[] {
  const summary = (id: string, variant: string) => metrics.find((m) => m.id === id)?.summary[variant];
  if (!summary('cluster-procs', CLUSTER_ON)) {
    const why = 'not measured: run without the cluster group, or redis-server is not installed (the run says which)';
    return Object.entries(GOALS).map(([id, goal]) => ({ id: `cluster-${id}`, goal, measured: NaN, unit: 'x', basis: why, met: null }));
  }
  const median = (id: string, variant: string) => summary(id, variant)?.median ?? NaN;
  const on = median('cluster-procs', CLUSTER_ON);
  const off = median('cluster-procs', CLUSTER_OFF);
  const inflight = median('cluster-inflight', OFF_OWNER) / median('cluster-inflight', ON_OWNER);
  const p50 = median('cluster-p50', OFF_OWNER) / median('cluster-p50', ON_OWNER);
  const death = summary('cluster-death-seen', CLUSTER_ON);
  const failover = summary('cluster-failover', CLUSTER_ON);
  const ms = (value: number | undefined) => `${(value ?? NaN).toFixed(0)} ms`;
  return [
    { id: 'cluster-procs', goal: GOALS.procs, measured: on, unit: 'count', basis: `processes with the cluster; without it: ${off} (3 gateways × the same servers)`, met: on * 3 === off },
    {
      id: 'cluster-inflight',
      goal: GOALS.inflight,
      measured: inflight,
      unit: 'x',
      basis: `median calls/s ${OFF_OWNER} ÷ ${ON_OWNER}: ${median('cluster-inflight', OFF_OWNER).toFixed(0)} ÷ ${median('cluster-inflight', ON_OWNER).toFixed(0)}, alternating rounds`,
      met: inflight >= 0.5,
    },
    { id: 'cluster-p50', goal: GOALS.p50, measured: p50, unit: 'x', basis: `median p50 ${ms(median('cluster-p50', OFF_OWNER))} ÷ ${ms(median('cluster-p50', ON_OWNER))}`, met: null },
    {
      id: 'cluster-death',
      goal: GOALS.death,
      measured: death?.max ?? NaN,
      unit: 'ms',
      basis: `slowest of ${death?.n ?? 0} deaths (median ${ms(death?.median)}); the bound by design is ${DEATH_SEEN_WITHIN_MS} ms (member key TTL + one refresh)`,
      met: (death?.max ?? Infinity) <= 3000,
    },
    { id: 'cluster-failover', goal: GOALS.failover, measured: failover?.median ?? NaN, unit: 'ms', basis: `median of ${failover?.n ?? 0} deaths, slowest ${ms(failover?.max)}; the first call after the death fails unavailable and evicts the dead member`, met: null },
  ];
}
