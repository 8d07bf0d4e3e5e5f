import { readdirSync, readFileSync } from 'node:fs';
import { McpServerManager } from '../../../src/manager/manager.js';
import type { ReloadReport } from '../../../src/manager/config/config-diff.js';
import { resolveCluster } from '../../../src/share/cluster/options.js';
import { fixture, waitFor } from '../../support/fixtures.js';
import { embeddedMembers, SECRET } from './support.js';

// Managers embedded in a host (no gateway): each serves the members' endpoint on its own
// `advertise` port. A config applied on one member is applied on every member.

const cluster = embeddedMembers();
const member = cluster.member;

it('a reload on one member is applied by every member; calls through either reach one process', async () => {
  const echo = fixture('echo-server.mjs');
  const first = { mcpServers: { echo } };
  const [a, b] = await Promise.all([member(first), member(first)]);
  const reports: ReloadReport[] = [];
  b.on('configChanged', (report) => reports.push(report));
  await a.reload({ mcpServers: { echo, again: echo } });
  expect(await waitFor(() => reports.length > 0, 5000)).toBe(true);
  expect(reports[0].added).toEqual(['again']);
  expect(Object.keys(b.status()).sort()).toEqual(['again', 'echo']);
  // `again` has echo's fingerprint: one process for both names, on whichever member owns it.
  const viaA = await a.callTool('mcp__echo__echo', { text: 'from a' });
  const viaB = await b.callTool('mcp__again__echo', { text: 'from b' });
  expect([viaA.content, viaB.content]).toEqual([[{ type: 'text', text: 'from a' }], [{ type: 'text', text: 'from b' }]]);
}, 60_000);

it('a bad cluster option is refused when the member joins, naming the field and never the secret', async () => {
  const wrongUrl = McpServerManager.fromConfig({ mcpServers: {} }, { cluster: { redis: 'http://nope', advertise: 'http://127.0.0.1:1', secret: SECRET } });
  cluster.track(wrongUrl);
  await expect(wrongUrl.clusterMember()).rejects.toThrow('manager option `cluster.redis` must be a redis:// or rediss:// URL, got "http://nope" (string)');
  const shortSecret = McpServerManager.fromConfig({ mcpServers: {} }, { cluster: { redis: cluster.redisUrl, advertise: 'http://127.0.0.1:1', secret: 'hunter2' } });
  cluster.track(shortSecret);
  const error = await shortSecret.clusterMember()!.catch((e: Error) => e);
  expect((error as Error).message).toBe('manager option cluster.secret (or LAZY_MCP_CLUSTER_SECRET) must be a string of at least 32 characters shared by every member, got 7 characters');
  expect(() => McpServerManager.fromConfig({ mcpServers: {} }, { cluster: { redis: 5 } as never })).toThrow(/manager option `cluster` must be \{ redis/);
});

/** What a member runs as an owner (fingerprints), from its internal health endpoint. */
async function running(manager: McpServerManager): Promise<string[]> {
  const member = (await manager.clusterMember())!;
  const auth = resolveCluster({ redis: cluster.redisUrl, advertise: 'http://x', secret: SECRET }).keys.auth;
  const response = await fetch(`${member.options.advertise}/.lazy-mcp/cluster/health`, { headers: { authorization: `Bearer ${auth}` } });
  return ((await response.json()) as { running: string[] }).running;
}

/** The processes of a fixture that are children of this process (every in-process member's servers are). */
function childrenRunning(script: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/status`, 'utf8').includes(`PPid:\t${process.pid}\n`)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(script)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

const toolNames = async (manager: McpServerManager) => (await manager.listTools()).map((t) => t.name).sort();

it("a server's tools/list_changed on its owner refreshes every member's catalog; their next listing shows the new tools and spawns nothing", async () => {
  const config = { mcpServers: { grows: fixture('grows-tools.mjs') } };
  const all = await Promise.all([member(config), member(config), member(config)]);
  expect(await toolNames(all[0])).toEqual(['mcp__grows__grow']);
  const [owner] = (await Promise.all(all.map(async (m) => [m, await running(m)] as const))).filter(([, r]) => r.length > 0).map(([m]) => m);
  expect(owner).toBeDefined();
  const others = all.filter((m) => m !== owner);
  // Every other member knows the tools (the shared cache): nothing of the server runs on them.
  for (const m of others) expect(await toolNames(m)).toEqual(['mcp__grows__grow']);
  const changed = new Map(all.map((m) => [m, 0]));
  for (const m of all) m.on('toolsChanged', ({ server }) => server === 'grows' && changed.set(m, changed.get(m)! + 1));

  // The server, on its owner, adds a tool and says so; asked through the owner itself.
  await owner.callTool('mcp__grows__grow', { name: 'first' });
  expect(await waitFor(() => others.every((m) => changed.get(m)! > 0), 5000)).toBe(true);
  for (const m of all) expect(await toolNames(m)).toEqual(['mcp__grows__first', 'mcp__grows__grow']);

  // Again, asked through a member that is not the owner (the notification reaches it over the members' HTTP).
  changed.forEach((_, m) => changed.set(m, 0));
  await others[0].callTool('mcp__grows__grow', { name: 'second' });
  expect(await waitFor(() => all.filter((m) => m !== others[0]).every((m) => changed.get(m)! > 0), 5000)).toBe(true);
  for (const m of all) expect(await toolNames(m)).toEqual(['mcp__grows__first', 'mcp__grows__grow', 'mcp__grows__second']);

  for (const m of others) expect(await running(m)).toEqual([]);
  expect(childrenRunning('grows-tools.mjs')).toHaveLength(1);
}, 60_000);

it('a reload made on a member while it applies one another member published is published too', async () => {
  const echo = fixture('echo-server.mjs');
  const [a, b] = await Promise.all([member({ mcpServers: { echo } }), member({ mcpServers: { echo } })]);
  const seenByA: ReloadReport[] = [];
  a.on('configChanged', (report) => seenByA.push(report));
  // b's own reload begins while b is still applying a's (its configChanged listener runs inside it).
  const ownReload = new Promise<ReloadReport>((resolve) => b.once('configChanged', () => resolve(b.reload({ mcpServers: { echo, third: echo } }))));
  await a.reload({ mcpServers: { echo, second: echo } });
  await ownReload;
  expect(await waitFor(() => seenByA.length === 2, 5000)).toBe(true);
  expect(Object.keys(a.status()).sort()).toEqual(['echo', 'third']);
  expect(Object.keys(b.status()).sort()).toEqual(['echo', 'third']);
}, 60_000);
