// `npm run bench`: the figures of issue 16 in one run, side by side: throughput at 64 in
// flight (bare pipe, McpClient, manager, session, SDK v1, SDK v2), sequential latency of
// alternating clients, a 5 MiB result, the cold first call, many servers, tool search,
// the 2026 era beside the legacy era, and Streamable HTTP against the SDK v2 client.
// Options: `--quick` (a smoke run of seconds), `--out DIR` (where results.json,
// RESULTS.md and ratios.svg go; default bench/), `--only a,b` (some figure groups:
// throughput, latency, big, cold, many, search, metrics, era, http, startup, daemon, gateway, cluster, principal; no chart then).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { clusterFigure } from './bench/cluster.js';
import { coldFigure } from './bench/cold.js';
import { daemonFigure } from './bench/daemon.js';
import { eraFigure, httpFigure } from './bench/era-http.js';
import { eraGatewayFigure, gatewayFigure } from './bench/gateway.js';
import { latencyFigure } from './bench/latency.js';
import { manyFigure } from './bench/many.js';
import { metricsFigure } from './bench/metrics-cost.js';
import { ALL_CPUS, pin } from './bench/pin.js';
import { placements } from './bench/placement.js';
import { principalFigure } from './bench/principal.js';
import { FULL, QUICK } from './bench/plan.js';
import { collect } from './bench/procs.js';
import { cpuTicks, machine, markdown, type Report, svgChart } from './bench/report.js';
import { type Metric, withSummary } from './bench/runs.js';
import { searchFigure } from './bench/search.js';
import { startupFigure } from './bench/startup.js';
import { packageVersion, repoRoot } from './bench/setup.js';
import { chartGroups, checkTargets } from './bench/targets.js';
import { bigFigure, throughputFigure } from './bench/throughput.js';

const GROUPS = ['throughput', 'latency', 'big', 'cold', 'many', 'search', 'metrics', 'era', 'http', 'startup', 'daemon', 'gateway', 'cluster', 'principal'] as const;

const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, out: { type: 'string' }, only: { type: 'string' } },
});
const plan = values.quick ? QUICK : FULL;
const outDir = resolve(values.out ?? join(repoRoot, 'bench'));
const only = values.only?.split(',').map((s) => s.trim());
const unknown = only?.filter((g) => !(GROUPS as readonly string[]).includes(g)) ?? [];
if (unknown.length > 0) throw new Error(`--only: unknown group(s) ${unknown.join(', ')}; known: ${GROUPS.join(', ')}`);
const wanted = (group: (typeof GROUPS)[number]) => !only || only.includes(group);

const started = Date.now();
const log = (text: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${text}\n`);
const host = machine();
const where = placements();
host.pinning = where.pinned
  ? `taskset: throughput and 5 MiB with the host on CPU ${where.split.host} and the children on CPU ${where.split.children}; ` +
    `sequential latency and cold starts with host and children on CPU ${where.shared.host}`
  : 'none (taskset not available)';
const loadSamples: number[] = [];
const sampler = setInterval(() => loadSamples.push(+loadavg()[0].toFixed(2)), 5000).unref();
const ticksStart = cpuTicks();
log(`${plan.mode} run, Node ${host.node}, ${host.cpus} CPUs, load ${host.loadAverageStart.join(' ')}, ${host.pinning}${collect() ? '' : ' (no --expose-gc: memory figures are rougher)'}`);

const metrics: Metric[] = [];
try {
  if (wanted('throughput')) {
    pin(where.split.host);
    metrics.push(...(await throughputFigure(plan, where.split, log)));
  }
  if (wanted('latency')) {
    pin(where.shared.host);
    metrics.push(...(await latencyFigure(plan, where.shared, log)));
  }
  if (wanted('big')) {
    pin(where.split.host);
    metrics.push(...(await bigFigure(plan, where.split, log)));
  }
  if (wanted('cold')) {
    pin(where.shared.host);
    metrics.push(...(await coldFigure(plan, log)));
  }
  if (wanted('era')) {
    pin(where.split.host);
    metrics.push(...(await eraFigure(plan, where.split, log)));
  }
  if (wanted('http')) {
    pin(where.split.host);
    metrics.push(...(await httpFigure(plan, where.split, log)));
  }
  if (wanted('gateway')) {
    pin(where.split.host);
    metrics.push(...(await gatewayFigure(plan, where.split, log)));
    metrics.push(...(await eraGatewayFigure(plan, where.split, log)));
  }
  pin(ALL_CPUS);
  if (wanted('many')) metrics.push(...(await manyFigure(plan, log)));
  if (wanted('search')) metrics.push(...searchFigure(plan, log));
  if (wanted('metrics')) metrics.push(...(await metricsFigure(plan, log)));
  if (wanted('startup')) metrics.push(...(await startupFigure(plan, log)));
  if (wanted('daemon')) metrics.push(...(await daemonFigure(plan, log)));
  if (wanted('cluster')) metrics.push(...(await clusterFigure(plan, log)));
  if (wanted('principal')) metrics.push(...(await principalFigure(plan, where, log)));
} finally {
  pin(ALL_CPUS);
  clearInterval(sampler);
}

const summaries = metrics.sort((a, b) => a.figure - b.figure).map(withSummary);
host.loadAverageEnd = loadavg().map((l) => +l.toFixed(2));
host.loadSamples = loadSamples;
const ticksEnd = cpuTicks();
if (ticksStart && ticksEnd) host.machineBusyPercent = (100 * (ticksEnd.busy - ticksStart.busy)) / Math.max(1, ticksEnd.total - ticksStart.total);
const report: Report = {
  date: new Date().toISOString(),
  mode: plan.mode,
  durationSeconds: (Date.now() - started) / 1000,
  machine: host,
  versions: {
    'lazy-mcp': packageVersion('package.json'),
    '@modelcontextprotocol/sdk': packageVersion('node_modules/@modelcontextprotocol/sdk/package.json'),
    '@modelcontextprotocol/client': packageVersion('node_modules/@modelcontextprotocol/client/package.json'),
  },
  gcExposed: collect(),
  targets: checkTargets(summaries, { configured: plan.configuredServers, cached: plan.cachedServers }),
  metrics: summaries,
};

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'results.json'), `${JSON.stringify({ plan, ...report }, null, 2)}\n`);
writeFileSync(join(outDir, 'RESULTS.md'), markdown(report));
if (!only) {
  const caption = `${report.date.slice(0, 10)}, Node ${host.node}, ${host.cpus} × ${host.cpuModel}; ${plan.mode} run; medians, side by side in one run`;
  writeFileSync(join(outDir, 'ratios.svg'), svgChart(chartGroups(summaries), caption));
}
for (const t of report.targets) {
  const value = !Number.isFinite(t.measured) ? '–' : t.unit === 'x' ? `${t.measured.toFixed(2)}×` : `${+t.measured.toFixed(2)} ${t.unit}`;
  log(`${t.met === null ? (Number.isFinite(t.measured) ? 'report' : 'n/a   ') : t.met ? 'met   ' : 'MISSED'} ${t.goal}: ${value}`);
}
log(`wrote ${outDir}/results.json, RESULTS.md${only ? '' : ', ratios.svg'}`);
