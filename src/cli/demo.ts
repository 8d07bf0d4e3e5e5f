#!/usr/bin/env node
// The `npm start` demo: what the runtime is for, shown with timings on the bundled
// example config — lazy start, one shared process per server, the manifest cache, and
// a shutdown that leaves nothing behind. Local servers only; no network.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { McpServerManager, type ManagerOptions } from '../index.js';
import { bundledConfigPath, prepareEnvironment } from './environment.js';
import { packageRoot, packageVersion } from '../util/package-info.js';
import { formatCallResult, table } from './format.js';

/** The tool that shows a lazy start: the dice server is ours and starts in milliseconds. */
const TOOL = 'mcp__dice__roll';
const CONCURRENT_CALLS = 20;
const TITLE_WIDTH = 62;

/** A manager and what its servers did: how many starts, and how long each start took. */
interface Watched {
  manager: McpServerManager;
  starts: number;
  startMs: Map<string, number>;
}

/** The demo's width: a line longer than this wraps at a space, its rest indented under it. */
const WIDTH = 80;

const print = (text = '') => process.stdout.write(`${text.split('\n').map(wrap).join('\n')}\n`);

/** One line wrapped at word boundaries to {@link WIDTH}; a word longer than the width stays whole. */
function wrap(line: string): string {
  if (line.length <= WIDTH) return line;
  const indent = /^ */.exec(line)?.[0] ?? '';
  const lines: string[] = [];
  let current = indent;
  let first = true;
  for (const word of line.slice(indent.length).split(' ')) {
    if (!first && current.length + 1 + word.length > WIDTH) {
      lines.push(current);
      current = `${indent}  ${word}`;
    } else current = first ? `${current}${word}` : `${current} ${word}`;
    first = false;
  }
  lines.push(current);
  return lines.join('\n');
}

/** `1. Title ......  84 ms` — the section's heading, with how long its step took. */
function section(step: number, title: string, ms: number): void {
  print();
  print(`${`${step}. ${title}`.padEnd(TITLE_WIDTH)}${`${ms} ms`.padStart(8)}`);
}

async function timed<T>(work: () => Promise<T> | T): Promise<[T, number]> {
  const began = performance.now();
  const value = await work();
  return [value, Math.round(performance.now() - began)];
}

/** Pids of the live server processes of one manager. */
function livePids(manager: McpServerManager): Map<string, number> {
  const pids = new Map<string, number>();
  for (const [server, status] of Object.entries(manager.status())) if (status.pid !== undefined) pids.set(server, status.pid);
  return pids;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

async function demo(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'lazy-mcp-demo-'));
  // The memory server's file and the tool cache go to a fresh folder, removed at the end.
  prepareEnvironment(process.env, tmp);
  const cacheDir = join(tmp, 'cache');
  const watched: Watched[] = [];
  const everyPid = new Set<number>();
  const open = (options: ManagerOptions = {}): Watched => {
    const manager = McpServerManager.fromFile(bundledConfigPath, { clientInfo: { name: 'lazy-mcp-demo', version: packageVersion() }, ...options });
    const w: Watched = { manager, starts: 0, startMs: new Map() };
    const began = new Map<string, number>();
    manager.on('stateChange', ({ server, to }) => {
      if (to === 'starting') {
        w.starts++;
        began.set(server, performance.now());
      } else if (to === 'ready') {
        w.startMs.set(server, Math.round(performance.now() - (began.get(server) ?? 0)));
        const pid = manager.status()[server]?.pid;
        if (pid !== undefined) everyPid.add(pid);
      }
    });
    watched.push(w);
    return w;
  };

  try {
    const [first, constructMs] = await timed(() => open({ cacheDir }));
    const servers = Object.keys(first.manager.status());
    print(`lazy-mcp ${packageVersion()} demo: ${servers.length} stdio MCP servers from ${relative(packageRoot, bundledConfigPath)} (${servers.join(', ')})`);

    section(1, 'Construct a manager', constructMs);
    print(`   ${livePids(first.manager).size} server processes running: nothing starts before it is needed`);

    const [tools, listMs] = await timed(() => first.manager.listTools());
    section(2, `List every tool: starts all ${servers.length} servers in parallel`, listMs);
    const status = first.manager.status();
    const rows = servers.map((server) => {
      const s = status[server];
      const started = first.startMs.get(server);
      return [server, started === undefined ? s.state : `ready in ${started} ms`, `${s.tools ?? 0} tools`, s.pid === undefined ? '' : `pid ${s.pid}`];
    });
    print(indent(table(['server', 'start', 'tools', 'process'], rows)));
    const sum = [...first.startMs.values()].reduce((a, b) => a + b, 0);
    print(`   ${tools.length} tools, e.g. ${[TOOL, 'mcp__fs__read_text_file', 'mcp__memory__read_graph'].join(', ')}`);
    print(`   In parallel, the wait is about the slowest start, not the sum of them (the starts add up to ${sum} ms)`);

    const second = open();
    const [rolled, callMs] = await timed(() => second.manager.callTool(TOOL, { dice: '2d6' }));
    section(3, `A fresh manager calls ${TOOL}`, callMs);
    print(`   → ${formatCallResult(rolled)}`);
    const running = livePids(second.manager);
    const idle = servers.filter((s) => !running.has(s));
    print(`   ${running.size} of ${servers.length} servers started: ${[...running].map(([s, pid]) => `${s} (pid ${pid})`).join(', ')}; ${idle.join(', ')} stay idle`);

    const [results, concurrentMs] = await timed(() =>
      Promise.all(Array.from({ length: CONCURRENT_CALLS }, (_, i) => second.manager.callTool(TOOL, { dice: `${i + 1}d6` }))),
    );
    section(4, `${CONCURRENT_CALLS} calls at once on that manager`, concurrentMs);
    const answered = results.filter((r) => !r.isError).length;
    const shared = livePids(second.manager);
    print(`   ${answered} of ${CONCURRENT_CALLS} answered over one connection to pid ${shared.get('dice')}; ${second.starts} start in all, ${shared.size} process`);

    const third = open({ cacheDir });
    const [cached, cachedMs] = await timed(() => third.manager.listTools());
    section(5, 'Another fresh manager lists tools from the manifest cache', cachedMs);
    print(`   ${cached.length} tools, ${third.starts} servers started, ${livePids(third.manager).size} processes running`);

    const [, shutdownMs] = await timed(() => Promise.all(watched.map((w) => w.manager.shutdown())));
    section(6, 'Shut every manager down', shutdownMs);
    const alive = [...everyPid].filter(isAlive);
    print(`   ${everyPid.size} server processes were started in this demo (pids ${[...everyPid].join(', ')}); ${alive.length} alive now`);
    if (alive.length > 0) throw new Error(`processes still alive after shutdown: ${alive.join(', ')}`);
    print();
    const cli = relative(process.cwd(), join(packageRoot, 'dist/cli/main.js')) || 'dist/cli/main.js';
    const config = relative(process.cwd(), bundledConfigPath) || bundledConfigPath;
    print('Try the CLI on the same servers:');
    print(`   node ${cli} tools --config ${config}`);
  } finally {
    await Promise.all(watched.map((w) => w.manager.shutdown()));
    rmSync(tmp, { recursive: true, force: true });
  }
}

function indent(text: string): string {
  return text.replace(/^/gm, '   ');
}

demo().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
