import type { ManagedTool } from '../../src/manager/catalog/tool-index.js';
import { ToolSearchIndex } from '../../src/model/tool-search.js';
import type { Plan } from './plan.js';
import { collect } from './procs.js';
import { Figure, type Metric } from './runs.js';
import { now, quantile, since } from './stats.js';

const VERBS = ['get', 'list', 'create', 'update', 'delete', 'search', 'read', 'write', 'send', 'sync', 'export', 'import'];
const NOUNS = ['issue', 'file', 'message', 'event', 'user', 'repo', 'ticket', 'invoice', 'page', 'record', 'channel', 'branch', 'report', 'task'];
const WORDS = ['quickly', 'project', 'calendar', 'database', 'remote', 'local', 'archive', 'folder', 'comment', 'label', 'status', 'owner'];

/** Figure 6: tool search over `servers` × `perServer` generated tools: indexing, then query latency. */
export function searchFigure(plan: Plan, log: (text: string) => void, servers = 100, perServer = 100): Metric[] {
  const total = servers * perServer;
  const figure = new Figure(6)
    .define('search-index', `tool search: index ${total} tools`, 'ms', 'lower')
    .define('search-index-cpu', `tool search: index ${total} tools, host CPU time (user + system)`, 'ms', 'lower')
    .define('search-query', `tool search over ${total} tools: query p50`, 'ms', 'lower');
  const byServer = new Map<string, ManagedTool[]>();
  let seed = 1;
  const pick = <T>(list: readonly T[]) => list[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % list.length];
  for (let s = 0; s < servers; s++) {
    const server = `srv${s}`;
    const tools: ManagedTool[] = [];
    for (let t = 0; t < perServer; t++) {
      const raw = `${pick(VERBS)}_${pick(NOUNS)}_${t}`;
      tools.push({
        name: `mcp__${server}__${raw}`,
        server,
        tool: {
          name: raw,
          description: `${pick(VERBS)} a ${pick(NOUNS)} of the ${pick(WORDS)} ${pick(NOUNS)}, ${pick(WORDS)} and ${pick(WORDS)}`,
          inputSchema: { type: 'object', properties: { [pick(NOUNS)]: { type: 'string' }, [pick(WORDS)]: { type: 'number' } } },
        },
      });
    }
    byServer.set(server, tools);
  }
  const queries = Array.from({ length: 200 }, () => `${pick(VERBS)} ${pick(NOUNS)} ${pick(WORDS)}`);
  const rounds = plan.mode === 'quick' ? 1 : 5;
  log(`figure 6: tool search, ${total} tools, ${rounds} runs`);
  for (let round = 0; round < rounds; round++) {
    collect();
    const index = new ToolSearchIndex<ManagedTool>();
    const cpu = process.cpuUsage();
    const start = now();
    for (const [server, tools] of byServer) index.update(server, tools);
    figure.record('search-index', 'ToolSearchIndex', since(start));
    const used = process.cpuUsage(cpu);
    figure.record('search-index-cpu', 'ToolSearchIndex', (used.user + used.system) / 1000);
    for (const q of queries.slice(0, 20)) index.search(q); // JIT warm-up
    const times = queries.map((q) => {
      const t = now();
      index.search(q);
      return since(t);
    });
    figure.record('search-query', 'ToolSearchIndex', quantile(times.sort((a, b) => a - b), 0.5));
  }
  return figure.list();
}
