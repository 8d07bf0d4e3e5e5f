// `npm run bench`: lazy-mcp against the MCP SDK client and the bare pipe, all figures of
// issue 6 in one run. Options: `--quick` (a smoke run of seconds), `--out DIR` (where
// results.json, RESULTS.md and ratios.svg go; default bench/), `--only a,b` (some
// figure groups: warm, cold, scale, list, shutdown, memory; no targets or chart then).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { coldFigure, scaleFigure } from './bench/cold.js';
import { memoryFigure } from './bench/memory.js';
import { FULL, QUICK } from './bench/plan.js';
import { listingFigure, shutdownFigure } from './bench/pool.js';
import { collect } from './bench/procs.js';
import { machine, markdown, type Report, svgChart } from './bench/report.js';
import { type Metric, withSummary } from './bench/runs.js';
import { packageVersion, repoRoot } from './bench/setup.js';
import { chartGroups, checkTargets } from './bench/targets.js';
import { warmFigures } from './bench/warm.js';

const GROUPS = ['warm', 'cold', 'scale', 'list', 'shutdown', 'memory'] as const;

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
log(`${plan.mode} run, Node ${host.node}, ${host.cpus} CPUs, load ${host.loadAverageStart.join(' ')}${collect() ? '' : ' (no --expose-gc: memory figures are rougher)'}`);

const metrics: Metric[] = [];
if (wanted('warm')) metrics.push(...(await warmFigures(plan, log)));
if (wanted('cold')) metrics.push(...(await coldFigure(plan, log)));
if (wanted('scale')) metrics.push(...(await scaleFigure(plan, log)));
if (wanted('list')) metrics.push(...(await listingFigure(plan, log)));
if (wanted('shutdown')) metrics.push(...(await shutdownFigure(plan, log)));
let gcExposed = collect();
if (wanted('memory')) {
  const memory = await memoryFigure(plan, log);
  metrics.push(...memory.metrics);
  gcExposed = memory.gc;
}

const summaries = metrics.sort((a, b) => a.figure - b.figure).map(withSummary);
const servers = { scale: plan.scaleServers, slow: plan.slowServers, slowInitMs: plan.slowInitMs, cores: host.cpus };
host.loadAverageEnd = loadavg().map((l) => +l.toFixed(2));
const report: Report = {
  date: new Date().toISOString(),
  mode: plan.mode,
  durationSeconds: (Date.now() - started) / 1000,
  machine: host,
  versions: {
    'lazy-mcp': packageVersion('package.json'),
    '@modelcontextprotocol/sdk': packageVersion('node_modules/@modelcontextprotocol/sdk/package.json'),
    'vscode-jsonrpc': packageVersion('node_modules/vscode-jsonrpc/package.json'),
  },
  gcExposed,
  targets: only ? [] : checkTargets(summaries, servers),
  metrics: summaries,
};

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'results.json'), `${JSON.stringify({ plan, ...report }, null, 2)}\n`);
writeFileSync(join(outDir, 'RESULTS.md'), markdown(report));
if (!only) {
  const caption = `${report.date.slice(0, 10)}, Node ${host.node}, ${host.cpus} × ${host.cpuModel}; ${plan.mode} run; medians of alternating runs`;
  writeFileSync(join(outDir, 'ratios.svg'), svgChart(chartGroups(summaries, servers), caption));
}
for (const t of report.targets) log(`${t.met ? 'met   ' : 'MISSED'} ${t.goal}: ${t.unit === 'x' ? `${t.measured.toFixed(2)}×` : `${+t.measured.toFixed(2)} ${t.unit}`}`);
log(`wrote ${outDir}/results.json, RESULTS.md${only ? '' : ', ratios.svg'}`);
