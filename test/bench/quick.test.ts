import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../support/fixtures.js';

const run = promisify(execFile);

/** Live processes running a fixture of the bench whose pid is `bench` (it runs them from its own temp copy). */
function serversOf(bench: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(`lazy-mcp-bench-fixtures-${bench}-`) && !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

// A smoke run of the benchmark: it must build, run every figure and write its results.
// No timing is asserted: benchmarks are not tests.
describe('npm run bench -- --quick', () => {
  let out: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-test-'));
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('builds, runs every figure and writes results.json, RESULTS.md and ratios.svg to --out', async () => {
    const committed = join(repoRoot, 'bench/results.json');
    const committedAt = existsSync(committed) ? statSync(committed).mtimeMs : undefined;
    await run(process.execPath, [resolve(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', resolve(repoRoot, 'tsconfig.bench.json')], {
      cwd: repoRoot,
      timeout: 240_000,
    });
    const bench = run(process.execPath, ['--expose-gc', resolve(repoRoot, 'dist-bench/scripts/bench.js'), '--quick', '--out', out], {
      cwd: repoRoot,
      // Figures 12–14 start gateway processes one after another (the peers, a cluster, its members' deaths).
      timeout: 300_000,
    });
    const pid = bench.child.pid!;
    await bench;
    // Every server the bench started is gone when it exits.
    expect(serversOf(pid)).toEqual([]);

    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results.mode).toBe('quick');
    expect(results.machine.node).toBe(process.version);
    const figures = new Set(results.metrics.map((m: { figure: number }) => m.figure));
    // Figure 14 (cluster) needs a redis-server; without one it is skipped and its targets say so.
    const withRedis = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/local/bin'].some((dir) => dir.startsWith('/') && existsSync(join(dir, 'redis-server'))) ? [14] : [];
    expect(([...figures] as number[]).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, ...withRedis, 15]);
    const clients = Object.keys(results.metrics.find((m: { id: string }) => m.id === 'inflight').runs).sort();
    expect(clients).toEqual(['McpClient', 'bare', 'manager', 'sdk v1', 'sdk v2', 'session']);
    const variants = (id: string) => Object.keys(results.metrics.find((m: { id: string }) => m.id === id).runs).sort();
    expect(variants('era-inflight')).toEqual(['McpClient, 2026 era', 'McpClient, legacy era']);
    expect(variants('http-inflight')).toEqual(['McpClient, 2026 era', 'McpClient, legacy era', 'sdk v2']);
    expect(variants('principal-inflight')).toEqual(['principal', 'session']);
    expect(variants('principal-p50')).toEqual(['principal', 'session']);
    expect(variants('gw-inflight')).toEqual([
      'direct (McpClient, stdio)',
      'mcp-hub /mcp (HTTP+SSE, legacy)',
      'mcp-proxy, 2026',
      'mcp-proxy, legacy',
      'serve --http, 2026',
      'serve --http, legacy',
      'serve, stdio, 2026',
      'serve, stdio, legacy',
    ]);
    expect(variants('gw-rss-backend')).toEqual(['lazy-mcp serve', 'mcp-hub', 'mcp-proxy']);
    expect(variants('era-gw-cpu')).toEqual(['McpClient, 2026 era', 'McpClient, legacy era', 'McpClient, legacy era carrying the 2026 bytes']);
    // The warm cache lists every configured server through the gateway without starting one; mcp-hub starts them all.
    expect(results.metrics.find((m: { id: string }) => m.id === 'gw-list-spawns').runs).toEqual({ 'lazy-mcp serve': [0], 'mcp-hub': [results.plan.gatewayListServers] });
    expect(variants('startup')).toEqual(['import lazy-mcp', 'import sdk v2 client', 'node -e 0', 'serve: first answer', 'tools, warm cache']);
    expect(variants('construct-fresh')).toEqual(['manager', 'manager, young generation pre-sized (no scavenge)']);
    for (const id of ['era-meta', 'http', 'startup-import', 'startup-serve', 'startup-tools', 'construct-fresh', 'gw-inflight', 'gw-seq', 'gw-http-peers', 'gw-memory', 'gw-list', 'era-client-cpu', 'principal']) expect(Number.isFinite(results.targets.find((t: { id: string }) => t.id === id).measured)).toBe(true);
    for (const metric of results.metrics) {
      for (const values of Object.values(metric.runs) as number[][]) {
        expect(values.length).toBeGreaterThan(0);
        for (const value of values) expect(Number.isFinite(value)).toBe(true);
      }
    }
    expect(results.targets.length).toBeGreaterThanOrEqual(15);
    for (const target of results.targets) {
      // A target is pass/fail with a finite value, reported (a value, no bound), or not measured (no value, a reason).
      if (target.met === null) expect(target.basis).toMatch(Number.isFinite(target.measured) ? /./ : /^not measured: /);
      else {
        expect(typeof target.met).toBe('boolean');
        expect(Number.isFinite(target.measured)).toBe(true);
      }
    }
    expect(results.machine.loadAverageEnd).toHaveLength(3);
    expect(typeof results.machine.pinning).toBe('string');
    expect(readFileSync(join(out, 'RESULTS.md'), 'utf8')).toContain('| goal | measured | how | met |');
    expect(readFileSync(join(out, 'ratios.svg'), 'utf8')).toMatch(/^<svg [^>]*>[\s\S]*<\/svg>\n$/);
    expect(existsSync(committed) ? statSync(committed).mtimeMs : undefined).toBe(committedAt);
  }, 540_000);
});
