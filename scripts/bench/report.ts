import { cpus, loadavg, release, totalmem } from 'node:os';
import type { MetricSummary } from './runs.js';
import type { ChartGroup, TargetResult } from './targets.js';

export interface Machine {
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  os: string;
  arch: string;
  node: string;
  v8: string;
  loadAverageStart: number[];
  loadAverageEnd?: number[];
}

export function machine(): Machine {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cpus: cpus().length,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    os: `${process.platform} ${release()}`,
    arch: process.arch,
    node: process.version,
    v8: process.versions.v8,
    loadAverageStart: loadavg().map((l) => +l.toFixed(2)),
  };
}

export interface Report {
  date: string;
  mode: string;
  durationSeconds: number;
  machine: Machine;
  versions: Record<string, string>;
  gcExposed: boolean;
  targets: TargetResult[];
  metrics: MetricSummary[];
}

const REFERENCE: Record<string, string> = { bare: 'bare', sdk: 'sdk' };

export function markdown(report: Report): string {
  const { machine: mc } = report;
  const lines = [
    '# Benchmark results',
    '',
    `Run of \`npm run bench\`${report.mode === 'quick' ? ' -- --quick (smoke run: too few runs to quote)' : ''} on ${report.date.slice(0, 10)} (${report.date}),`,
    `${Math.round(report.durationSeconds)} s in all. Raw values of every run: [results.json](results.json); chart: [ratios.svg](ratios.svg).`,
    'Reproduce with `npm run bench` (source: `scripts/bench.ts`, `scripts/bench/`); `npm run bench -- --quick` is a smoke run.',
    '',
    `- Node ${mc.node} (V8 ${mc.v8}), ${mc.os} ${mc.arch}`,
    `- ${mc.cpus} × ${mc.cpuModel}, ${mc.memoryGiB} GiB RAM; a shared, noisy VM`,
    `- load average (1, 5, 15 min) at the start ${mc.loadAverageStart.join(', ')}, at the end ${mc.loadAverageEnd?.join(', ') ?? '?'}`,
    `- ${Object.entries(report.versions).map(([name, version]) => `${name} ${version}`).join(', ')}; full GC before each run: ${report.gcExposed ? 'yes' : 'no (run without --expose-gc)'}`,
    '',
    'Clients, each on its own child of the same server with the same environment (the safe allow-list):',
    '**lazy-mcp** (`McpClient`; *lazy-mcp manager*: `McpServerManager`), **sdk** (`@modelcontextprotocol/sdk`',
    '`Client` + `StdioClientTransport`), **bare** (the physical limit: newline-delimited requests written to the',
    "child's stdin, answers matched by id, handshake by hand, nothing else). The clients alternate run by run,",
    'the order rotating each round; each cell is the median of the runs with the range. Ratios are medians divided',
    'by the bare pipe\'s / the SDK\'s median of the same measure (for calls/s above 1 is better, for times below 1).',
    '',
    '## Targets (issue 6)',
    '',
    '| goal | measured | how | met |',
    '|---|---|---|---|',
    ...report.targets.map((t) => `| ${t.goal} | ${formatTarget(t)} | ${t.basis} | ${t.met ? 'yes' : '**no**'} |`),
    '',
    '## Figures',
    '',
    '| # | measure | client | median | min – max | runs | × bare | × SDK |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const metric of report.metrics) {
    for (const [variant, s] of Object.entries(metric.summary)) {
      const vs = (ref: string) => {
        const base = metric.summary[REFERENCE[ref]];
        if (!base || variant === ref || metric.better === 'none' || metric.unit === 'count') return '';
        return `${(s.median / base.median).toFixed(2)}×`;
      };
      lines.push(
        `| ${metric.figure} | ${metric.label} | ${variant} | ${format(s.median, metric.unit)} | ${format(s.min, metric.unit, false)} – ${format(s.max, metric.unit, false)} | ${s.n} | ${vs('bare')} | ${vs('sdk')} |`,
      );
    }
  }
  lines.push(
    '',
    'Notes: figure 5\'s SDK row connects every server in turn before the first call, as multi-server clients do;',
    "figure 6's peers start all servers in parallel (a stronger baseline). Figure 7's SDK stubborn time is the",
    "SDK's own close sequence (stdin, 2 s, SIGTERM, 2 s, SIGKILL) until the process is gone. Memory is read after",
    'a full GC; growth near 0 (or negative) over many calls means nothing is kept per call.',
    '',
  );
  return lines.join('\n');
}

function formatTarget(t: TargetResult): string {
  if (t.unit === 'x') return `${t.measured.toFixed(2)}×`;
  if (t.unit === 'ms') return `${t.measured.toFixed(2)} ms`;
  return String(t.measured);
}

function format(value: number, unit: string, withUnit = true): string {
  if (!Number.isFinite(value)) return '–';
  let text: string;
  if (unit === 'calls/s') text = Math.round(value).toLocaleString('en-US');
  else if (unit === 'µs' || unit === 'count') text = String(Math.round(value));
  else if (unit === 'MiB') text = value.toFixed(2);
  else text = Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(Math.abs(value) >= 10 ? 1 : 2);
  return withUnit && unit !== 'count' ? `${text} ${unit}` : text;
}

const COLORS: Record<string, string> = { 'lazy-mcp': '#2563eb', 'lazy-mcp manager': '#60a5fa', sdk: '#9ca3af', bare: '#4b5563' };
const colorOf = (label: string) => COLORS[label] ?? COLORS[label.split(' ')[0]] ?? '#9ca3af';

/** A horizontal bar chart of ratios: one group per measure, the goal as a red mark, 1× as a line. */
export function svgChart(groups: readonly ChartGroup[], caption: string): string {
  const width = 760;
  const left = 210;
  const right = 70;
  const barH = 16;
  const gap = 4;
  const top = 46;
  const scaleMax = 3;
  const x = (v: number) => left + (Math.min(v, scaleMax) / scaleMax) * (width - left - right);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts: string[] = [];
  let y = top;
  for (const group of groups) {
    const goal = group.target ? `; goal ${group.target.label} (red mark)` : '';
    parts.push(`<text x="12" y="${y + 12}"><tspan font-weight="600">${esc(group.title)}</tspan><tspan fill="#dc2626">${esc(goal)}</tspan></text>`);
    y += 20;
    const start = y;
    const end = start + group.bars.length * (barH + gap);
    // The goal's mark first, so the value labels are drawn over it.
    if (group.target) {
      const tx = x(group.target.value).toFixed(1);
      parts.push(`<line x1="${tx}" x2="${tx}" y1="${start - 3}" y2="${end - gap + 3}" stroke="#dc2626" stroke-width="2" stroke-dasharray="4 2"/>`);
    }
    for (const bar of group.bars) {
      const w = Math.max(1, x(bar.value) - left);
      const over = bar.value > scaleMax;
      parts.push(
        `<text x="${left - 8}" y="${y + 12}" text-anchor="end">${esc(bar.label)}</text>`,
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${colorOf(bar.label)}"/>`,
        `<text x="${(left + w + 6).toFixed(1)}" y="${y + 12}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${over ? '» ' : ''}${bar.value.toFixed(2)}×</text>`,
      );
      y += barH + gap;
    }
    y += 16;
  }
  const axisY = y;
  const ticks = [0, 0.5, 1, 1.5, 2, 2.5, 3];
  const grid = ticks.map(
    (t) =>
      `<line x1="${x(t)}" x2="${x(t)}" y1="${top}" y2="${axisY}" stroke="${t === 1 ? '#111827' : '#e5e7eb'}" stroke-width="${t === 1 ? 1.5 : 1}"/>` +
      `<text x="${x(t)}" y="${axisY + 14}" text-anchor="middle" font-size="11">${t}×</text>`,
  );
  const height = axisY + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12" fill="#111827">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="12" y="22" font-size="15" font-weight="700">lazy-mcp vs the MCP SDK and the bare pipe: ratios of medians</text>`,
    `<text x="12" y="38" font-size="11" fill="#4b5563">${esc(caption)}</text>`,
    ...grid,
    ...parts,
    `<text x="12" y="${axisY + 32}" font-size="11" fill="#4b5563">1× (black line) is the reference named in each title. Red dashed mark: the goal of issue 6. Bars past ${scaleMax}× are cut (»).</text>`,
    '</svg>',
    '',
  ].join('\n');
}
