// What the model sees: token cost of every tool schema versus the top 5 of a search, index
// and query times, and top-3 accuracy on the hand-written queries of
// scripts/tool-search/queries.json, over the reference servers' real manifests and a
// generated 10k-tool set. Run: `npx tsc -p tsconfig.bench.json && node dist-bench/scripts/tool-search-report.js`.
// Tokens are estimated as bytes/4 of the tool definitions' JSON (name, description, inputSchema).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpServerManager } from '../src/manager/manager.js';
import type { ManagedTool } from '../src/manager/catalog/tool-index.js';
import { ToolSearchIndex } from '../src/model/tool-search.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const reference = (pkg: string, ...args: string[]) => ({
  command: process.execPath,
  args: [join(repoRoot, `node_modules/@modelcontextprotocol/server-${pkg}/dist/index.js`), ...args],
});

const tokens = (tools: readonly ManagedTool[]) =>
  Math.round(tools.reduce((sum, t) => sum + Buffer.byteLength(JSON.stringify({ name: t.name, description: t.tool.description, inputSchema: t.tool.inputSchema })), 0) / 4);

function indexOf(tools: readonly ManagedTool[]): ToolSearchIndex<ManagedTool> {
  const index = new ToolSearchIndex<ManagedTool>();
  const byServer = new Map<string, ManagedTool[]>();
  for (const t of tools) byServer.set(t.server, [...(byServer.get(t.server) ?? []), t]);
  for (const [server, list] of byServer) index.update(server, list);
  return index;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function timeQueries(index: ToolSearchIndex<ManagedTool>, queries: string[], rounds: number): { p50: number; p99: number } {
  for (const q of queries) index.search(q); // warm up the JIT
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      const start = process.hrtime.bigint();
      index.search(q);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

// --- the reference servers, listed once through the manager ---
const dir = mkdtempSync(join(tmpdir(), 'lazy-mcp-search-report-'));
const manager = McpServerManager.fromConfig({
  mcpServers: {
    everything: reference('everything', 'stdio'),
    filesystem: reference('filesystem', dir),
    memory: { ...reference('memory'), env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
  },
});
const tools = await manager.listTools();
await manager.shutdown();
rmSync(dir, { recursive: true, force: true });

const { pairs } = JSON.parse(readFileSync(join(repoRoot, 'scripts/tool-search/queries.json'), 'utf8')) as { pairs: [string, string][] };
const refIndex = indexOf(tools);
let top1 = 0;
let top3 = 0;
const misses: string[] = [];
let top5Tokens = 0;
for (const [query, expected] of pairs) {
  const found = refIndex.search(query, { limit: 5 });
  const names = found.map((m) => m.name);
  if (names[0] === expected) top1++;
  if (names.slice(0, 3).includes(expected)) top3++;
  else misses.push(`${JSON.stringify(query)} → ${names.slice(0, 3).join(', ') || '(nothing)'} (wanted ${expected})`);
  top5Tokens += tokens(found);
}
const refTimes = timeQueries(refIndex, pairs.map(([q]) => q), 50);

// --- a generated 10k-tool set: 100 servers of 100 tools, words drawn from a fixed vocabulary ---
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
const verbs = ['get', 'list', 'create', 'update', 'delete', 'search', 'read', 'write', 'send', 'fetch', 'sync', 'archive', 'export', 'import', 'validate', 'approve', 'cancel', 'schedule', 'assign', 'merge'];
const nouns = ['issue', 'invoice', 'customer', 'order', 'ticket', 'message', 'file', 'folder', 'branch', 'commit', 'deployment', 'alert', 'dashboard', 'report', 'user', 'team', 'project', 'calendar_event', 'contact', 'payment', 'subscription', 'record', 'document', 'channel', 'metric', 'log', 'secret', 'job', 'pipeline', 'release'];
const domains = ['github', 'jira', 'stripe', 'slack', 'gmail', 'drive', 'sentry', 'grafana', 'salesforce', 'notion', 'linear', 'zendesk', 'hubspot', 'datadog', 'vault', 'jenkins', 'calendar', 'dropbox', 'figma', 'asana'];
const fillers = ['for the current workspace', 'with optional filters', 'by its identifier', 'and return the result as JSON', 'in bulk', 'that match a query', 'for a date range', 'owned by a user'];
const generated: ManagedTool[] = [];
for (let s = 0; s < 100; s++) {
  const domain = `${domains[s % domains.length]}${Math.floor(s / domains.length) || ''}`;
  const seen = new Set<string>();
  while (seen.size < 100) {
    const verb = pick(verbs);
    const noun = pick(nouns);
    const raw = `${verb}_${noun}${seen.has(`${verb}_${noun}`) ? `_${seen.size}` : ''}`;
    seen.add(raw);
    const properties = Object.fromEntries(
      Array.from({ length: 1 + Math.floor(random() * 5) }, () => [pick(['id', 'query', 'limit', 'owner', 'status', 'since', 'until', 'tags', 'body', 'title']), { type: 'string', description: `The ${noun.replace('_', ' ')} ${pick(['filter', 'value', 'field'])}` }]),
    );
    generated.push({
      name: `mcp__${domain}__${raw}`,
      server: domain,
      tool: { name: raw, description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun.replace('_', ' ')} in ${domains[s % domains.length]} ${pick(fillers)}.`, inputSchema: { type: 'object', properties } },
    });
  }
}
const indexTimes: number[] = [];
let bigIndex = indexOf(generated);
for (let i = 0; i < 5; i++) {
  const start = process.hrtime.bigint();
  bigIndex = indexOf(generated);
  indexTimes.push(Number(process.hrtime.bigint() - start) / 1e6);
}
const oneServer = generated.filter((t) => t.server === generated[0].server).map((t) => ({ ...t }));
const updateStart = process.hrtime.bigint();
bigIndex.update(generated[0].server, oneServer);
const updateMs = Number(process.hrtime.bigint() - updateStart) / 1e6;
const bigQueries: string[] = [];
let bigHits = 0;
const probes = Array.from({ length: 200 }, () => pick(generated));
for (const probe of probes) {
  const domain = probe.server.replace(/\d+$/, '');
  // A descriptive query: the verb, the noun and the product, as a user would say it.
  const query = `${probe.tool.name.split('_')[0]} ${probe.tool.name.split('_').slice(1).join(' ').replace(/ \d+$/, '')} in ${domain}`;
  bigQueries.push(query, probe.tool.name);
  if (bigIndex.search(query, { limit: 3 }).some((m) => m.tool.name === probe.tool.name.replace(/_\d+$/, '') || m.name === probe.name)) bigHits++;
}
const exactFirst = probes.filter((p) => bigIndex.search(p.name)[0]?.name === p.name).length;
const bigTimes = timeQueries(bigIndex, bigQueries, 5);
const bigTop5 = Math.round(probes.reduce((sum, p) => sum + tokens(bigIndex.search(p.tool.description ?? '', { limit: 5 })), 0) / probes.length);

const f = (n: number, digits = 2) => n.toFixed(digits);
const lines = [
  `| set | tools | all schemas (tokens) | top 5 of a search (tokens, mean) | index build | query p50 / p99 | accuracy |`,
  `|---|---:|---:|---:|---:|---:|---|`,
  `| reference servers (everything, filesystem, memory) | ${tools.length} | ${tokens(tools)} | ${Math.round(top5Tokens / pairs.length)} | ${f(timeOf(() => indexOf(tools)))} ms | ${f(refTimes.p50, 3)} / ${f(refTimes.p99, 3)} ms | top-3 ${top3}/${pairs.length}, top-1 ${top1}/${pairs.length} |`,
  `| generated | ${generated.length} | ${tokens(generated)} | ${bigTop5} | ${f(percentile(indexTimes, 50), 0)} ms (one server re-indexed: ${f(updateMs)} ms) | ${f(bigTimes.p50, 3)} / ${f(bigTimes.p99, 3)} ms | descriptive top-3 ${bigHits}/${probes.length}, exact name first ${exactFirst}/${probes.length} |`,
];
process.stdout.write(`${lines.join('\n')}\n\nTokens: bytes/4 of each definition's JSON (name, description, inputSchema). Node ${process.version}.\n`);
if (misses.length) process.stdout.write(`\nReference queries not in the top 3:\n${misses.map((m) => `- ${m}`).join('\n')}\n`);

function timeOf(work: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = process.hrtime.bigint();
    work();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return percentile(times, 50);
}
