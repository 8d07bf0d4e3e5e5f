import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { GATEWAY_NOTES } from './gateway-targets.js';
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
  /** 1-minute load averages sampled every few seconds during the run. */
  loadSamples?: number[];
  /** Share of the whole machine's CPU time that was busy during the run (all processes, this one included), %. */
  machineBusyPercent?: number;
  /** taskset placement: where the host and the children ran, per figure group. */
  pinning?: string;
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

/** Busy and total jiffies of all CPUs so far (/proc/stat); undefined where there is none. */
export function cpuTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'latin1').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
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

export function markdown(report: Report): string {
  const { machine: mc } = report;
  const samples = mc.loadSamples ?? [];
  const load = samples.length ? `1-min load sampled during the run: ${Math.min(...samples).toFixed(2)}–${Math.max(...samples).toFixed(2)} (median ${median(samples).toFixed(2)}) on ${mc.cpus} CPUs` : '';
  const lines = [
    '# Benchmark results',
    '',
    `Run of \`npm run bench\`${report.mode === 'quick' ? ' -- --quick (smoke run: too few runs to quote)' : ''} on ${report.date.slice(0, 10)} (${report.date}),`,
    `${Math.round(report.durationSeconds)} s in all. Raw values of every run: [results.json](results.json); chart: [ratios.svg](ratios.svg).`,
    'Reproduce with `npm run bench` (source: `scripts/bench.ts`, `scripts/bench/`); `npm run bench -- --quick` is a smoke run.',
    '',
    `- Node ${mc.node} (V8 ${mc.v8}), ${mc.os} ${mc.arch}`,
    `- ${mc.cpus} × ${mc.cpuModel}, ${mc.memoryGiB} GiB RAM; a shared, noisy VM`,
    `- machine load: load average (1, 5, 15 min) ${mc.loadAverageStart.join(', ')} at the start, ${mc.loadAverageEnd?.join(', ') ?? '?'} at the end; ${load}` +
      `${mc.machineBusyPercent === undefined ? '' : `; the machine's CPUs were ${mc.machineBusyPercent.toFixed(0)}% busy over the run (all processes, the bench's own included)`}`,
    `- CPU pinning: ${mc.pinning ?? 'none'}`,
    `- ${Object.entries(report.versions).map(([name, version]) => `${name} ${version}`).join(', ')}; full GC before each run: ${report.gcExposed ? 'yes' : 'no (run without --expose-gc)'}`,
    '',
    'Clients, each on its own child of the same echo server (`test/fixtures/bench-echo-server.mjs`) with the same environment',
    '(the safe allow-list): **bare** (the physical limit: one `write` of newline-delimited JSON per request, answers matched by id,',
    'handshake by hand, nothing else), **McpClient**, **manager** (`McpServerManager.callTool` by public name, one server configured),',
    '**session** (`manager.session().callTool`, on a manager of its own), **sdk v1** (`@modelcontextprotocol/sdk` `Client` +',
    '`StdioClientTransport`), **sdk v2** (`@modelcontextprotocol/client` `Client` + `StdioClientTransport`). The clients alternate run',
    'by run (sequential latency: block by block) in one process, the order rotating each round; each cell is the median of the runs',
    'with the range. Ratios divide medians of the same measure taken side by side in this run.',
    '',
    '## Targets (issues 16 and 34)',
    '',
    '| goal | measured | how | met |',
    '|---|---|---|---|',
    ...report.targets.map((t) => `| ${t.goal} | ${formatTarget(t)} | ${t.basis} | ${t.met === null ? (Number.isFinite(t.measured) ? 'reported' : 'not measured') : t.met ? 'yes' : '**no**'} |`),
    '',
    '## Figures',
    '',
    '| # | measure | client | median | min – max | runs | × bare |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const metric of report.metrics) {
    for (const [variant, s] of Object.entries(metric.summary)) {
      const base = metric.summary.bare;
      const vs = !base || !(base.median > 0) || variant === 'bare' || metric.better === 'none' || metric.unit === 'count' ? '' : `${(s.median / base.median).toFixed(2)}×`;
      lines.push(`| ${metric.figure} | ${metric.label} | ${variant} | ${format(s.median, metric.unit)} | ${format(s.min, metric.unit, false)} – ${format(s.max, metric.unit, false)} | ${s.n} | ${vs} |`);
    }
  }
  lines.push('', ...NOTES, '');
  return lines.join('\n');
}

const NOTES = [
  '## Notes',
  '',
  '- **Pinning.** On this VM a child\'s latency depends on which vCPU it runs on, so clients compared side by side get their',
  '  children on the same CPUs (`taskset`; a child inherits the affinity of the host thread that spawns it). Throughput and the',
  '  5 MiB result: the host on CPU 0, every child on the last CPU. Sequential latency and cold starts: host and children on CPU 0.',
  '- **Sequential latency** alternates the clients in blocks in one process; p50/p99 are over every call of a client, and the',
  '  paired ratio compares each block with the bare block of the same round. Separate processes swing 2× between runs here.',
  '- **Cold** first call: the manager has a warm manifest cache (so it routes without listing) and a legacy-era server (its',
  '  era needs no probing); *manager, no cache* is the same without `cacheDir`. The close after each run is not timed.',
  '- **Memory** is read after a full GC (`--expose-gc`): heap growth ÷ servers. RSS per connection is rougher (pages).',
  '- **Eras** (figure 8): `McpClient` on two children of the SDK v2 server `test/fixtures/sdk2-modern-server.mjs --dual`, one',
  '  forced into the 2026 era (`era: \'2026\'`: per-request `_meta`, `resultType`), one in the legacy era (the default on stdio),',
  '  pinned as figure 1; the cost is 1 − 2026 ÷ legacy.',
  '- **HTTP** (figure 9): one SDK v2 Streamable HTTP server (`createMcpHandler` + `toNodeHandler`, `scripts/bench/http-server.ts`)',
  '  on 127.0.0.1, a child on the last CPU, the clients in the host on CPU 0: `McpClient` over lazy-mcp\'s HTTP channel in the',
  '  legacy era (the SDK v2 client\'s default, so the target compares the same protocol) and in the 2026 era (ours by default',
  '  over HTTP), and the SDK v2 `Client` + `StreamableHTTPClientTransport`. Both use Node\'s fetch, whose pool keeps sockets alive.',
  '- **Start-up** (figure 10): fresh processes of this Node with only PATH, HOME and LANG (this machine\'s large',
  '  `NODE_EXTRA_CA_CERTS` adds ~80 ms to every Node start), not pinned, alternating run by run: `node -e 0`,',
  '  `import(\'lazy-mcp\')` (dist/, by the package\'s name) and `import(\'@modelcontextprotocol/client\')`, each until the',
  '  process exits; `lazy-mcp serve` (one echo server configured, a warm manifest cache) until its answer to `initialize`',
  '  on stdout; `lazy-mcp tools` from that cache until it exits; and a child that imports the package and times its first',
  '  `fromConfig` of the figure-5 config. The targets give each median with its range and the ratio paired round by round.',
  '- **Loaded machine.** Other sessions share these 2 vCPUs; the load line above says how busy they were. Under heavy load',
  '  absolute figures shrink and swing (calls/s by 5×), wall-time targets (construction, cached listing, tool search) fail',
  '  on waiting for a CPU, and the host CPU time rows show the work itself. Ratios of clients measured side by side hold',
  '  up better but not fully; re-run `npm run bench` on a quiet machine before quoting a figure.',
  ...GATEWAY_NOTES,
  '- **Principals** (figure 15): `manager.session({ principal })` calling a server run per principal (`"perPrincipal": true`)',
  '  beside `manager.session()` calling the same echo server shared, each on a manager and a child of its own: sequential',
  '  blocks pinned as figure 2, then 64 in flight pinned as figure 1, alternating.',
  '- What holds the missed targets, with profiles and what was tried: [PROFILE.md](PROFILE.md).',
  '- The figures of issue 6 that this bench no longer runs (cold listing of slow servers, shutdown, the SDK connecting 100',
  '  servers in turn, memory growth over 100k calls) are in the history of this file.',
  '- **Cluster** (figure 14, issue 30): three `lazy-mcp serve --http` gateways and one `redis-server` on 127.0.0.1, not pinned.',
  '  Processes: each gateway\'s client calls each of the servers, with `--cluster` and without. Owner or not: one echo server, its',
  '  owner\'s gateway and another member\'s (relayed over the members\' HTTP) called alternately, sequential then 64 in flight.',
  '  Deaths: the owner SIGKILLed; *death-seen* polls the survivors\' views with no calls (heartbeat expiry), *failover* calls',
  '  through a survivor until the server answers on its next owner; a new member replaces each dead one. Skipped without redis-server.',
];

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

function formatTarget(t: TargetResult): string {
  if (!Number.isFinite(t.measured)) return '–';
  if (t.unit === 'x') return `${t.measured.toFixed(2)}×`;
  if (t.unit === 'ms') return `${t.measured.toFixed(2)} ms`;
  if (t.unit === 'bytes') return `${Math.round(t.measured).toLocaleString('en-US')} B`;
  if (t.unit === '%') return `${t.measured.toFixed(1)} %`;
  return String(t.measured);
}

function format(value: number, unit: string, withUnit = true): string {
  if (!Number.isFinite(value)) return '–';
  let text: string;
  if (unit === 'calls/s' || unit === 'bytes') text = Math.round(value).toLocaleString('en-US');
  else if (unit === 'µs' || unit === 'count') text = String(Math.round(value));
  else if (unit === 'x') text = value.toFixed(2);
  else text = Math.abs(value) >= 100 ? value.toFixed(0) : value.toFixed(Math.abs(value) >= 10 ? 1 : 2);
  return withUnit && unit !== 'count' ? `${text} ${unit === 'x' ? '×' : unit}` : text;
}

const COLORS: Record<string, string> = { McpClient: '#93c5fd', manager: '#2563eb', session: '#60a5fa', 'sdk v1': '#9ca3af', 'sdk v2': '#6b7280', bare: '#4b5563' };
const colorOf = (label: string) => COLORS[label] ?? COLORS[label.split(/[ ,]/)[0]] ?? '#9ca3af';

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
    `<text x="12" y="22" font-size="15" font-weight="700">lazy-mcp (manager, session, McpClient) vs the MCP SDKs and the bare pipe: ratios of medians</text>`,
    `<text x="12" y="38" font-size="11" fill="#4b5563">${esc(caption)}</text>`,
    ...grid,
    ...parts,
    `<text x="12" y="${axisY + 32}" font-size="11" fill="#4b5563">1× (black line) is the reference named in each title. Red dashed mark: the goal of issue 16. Bars past ${scaleMax}× are cut (»).</text>`,
    '</svg>',
    '',
  ].join('\n');
}
