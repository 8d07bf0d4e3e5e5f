import { McpServerManager } from '../../../src/manager/manager.js';
import type { ReloadReport } from '../../../src/manager/config/config-diff.js';
import { fixture, waitFor } from '../../support/fixtures.js';
import { freePort, SECRET, TestRedis } from './support.js';

// Managers embedded in a host (no gateway): each serves the members' endpoint on its own
// `advertise` port. A config applied on one member is applied on every member.

let redis: TestRedis;
const managers: McpServerManager[] = [];

beforeAll(async () => {
  redis = await TestRedis.start();
});
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.shutdown()));
});
afterAll(async () => {
  await redis.stop();
});

async function member(config: object): Promise<McpServerManager> {
  const port = await freePort();
  const manager = McpServerManager.fromConfig(config, { cluster: { redis: redis.url, advertise: `http://127.0.0.1:${port}`, secret: SECRET } });
  managers.push(manager);
  await manager.clusterMember();
  return manager;
}

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
  managers.push(wrongUrl);
  await expect(wrongUrl.clusterMember()).rejects.toThrow('manager option `cluster.redis` must be a redis:// or rediss:// URL, got "http://nope" (string)');
  const shortSecret = McpServerManager.fromConfig({ mcpServers: {} }, { cluster: { redis: redis.url, advertise: 'http://127.0.0.1:1', secret: 'hunter2' } });
  managers.push(shortSecret);
  const error = await shortSecret.clusterMember()!.catch((e: Error) => e);
  expect((error as Error).message).toBe('manager option cluster.secret (or LAZY_MCP_CLUSTER_SECRET) must be a string of at least 32 characters shared by every member, got 7 characters');
  expect(() => McpServerManager.fromConfig({ mcpServers: {} }, { cluster: { redis: 5 } as never })).toThrow(/manager option `cluster` must be \{ redis/);
});
