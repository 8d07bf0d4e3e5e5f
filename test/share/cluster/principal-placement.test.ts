import type { McpServerManager } from '../../../src/manager/manager.js';
import { INTERNAL_PREFIX } from '../../../src/share/cluster/owner-host.js';
import { fixture, textOf } from '../../support/fixtures.js';
import { embeddedMembers } from './support.js';

// Two members embedded in hosts (no gateway), one server run per principal: each principal's
// instance runs on the member its (fingerprint, principal) hash picks, with its credentials.

const cluster = embeddedMembers();
const member = cluster.member;

/** What a member runs (keys of its owned servers), from its internal health endpoint. */
async function running(manager: McpServerManager): Promise<string[]> {
  const m = await manager.clusterMember()!;
  const answer = await fetch(`${m.options.advertise}${INTERNAL_PREFIX}health`, { headers: { authorization: `Bearer ${m.options.keys.auth}` } });
  return ((await answer.json()) as { running: string[] }).running;
}

type Who = { token: string | null; pid: number };

it("places each principal's instance by its principal: a call on a non-owner reaches the owner's instance with that principal's credential", async () => {
  const config = { mcpServers: { gh: { ...fixture('reports-credential.mjs'), env: { TOKEN: '${principal:TOKEN}' } } } };
  const [a, b] = await Promise.all([member(config), member(config)]);
  const whoami = async (manager: McpServerManager, principal: string): Promise<Who> =>
    JSON.parse(textOf(await manager.session({ principal: { id: principal, credentials: { TOKEN: `token-of-${principal}` } } }).callTool('mcp__gh__whoami'))) as Who;

  // Called on a, principals land on a or b by their hash; go on until one landed on each.
  const onB: string[] = [];
  const onA: string[] = [];
  for (let i = 0; i < 24 && (onA.length === 0 || onB.length === 0); i++) {
    const principal = `user-${i}`;
    const before = (await running(b)).length;
    const who = await whoami(a, principal);
    expect(who.token).toBe(`token-of-${principal}`);
    ((await running(b)).length > before ? onB : onA).push(principal);
  }
  expect(onA.length).toBeGreaterThan(0);
  expect(onB.length).toBeGreaterThan(0);
  // b owns onB[0]: the call made on a ran there, and b's own call reaches the same process.
  const viaA = await whoami(a, onB[0]!);
  const viaB = await whoami(b, onB[0]!);
  expect(viaB).toEqual(viaA);
  expect(viaB.token).toBe(`token-of-${onB[0]}`);
  // One process per principal in the cluster, whatever member is called; another principal's is another.
  expect((await whoami(b, onA[0]!)).pid).not.toBe(viaB.pid);
  // (Not an exact count: a peer that misses a probe under load is evicted for a beat and the caller runs the server itself.)
  expect((await running(b)).length).toBeGreaterThanOrEqual(onB.length);
  // Credentials never name what runs where.
  expect(JSON.stringify([await running(a), await running(b)])).not.toContain('token-of-');
}, 60_000);

it("refuses an instance whose sealed credentials were forged", async () => {
  const config = { mcpServers: { gh: { ...fixture('reports-credential.mjs'), env: { TOKEN: '${principal:TOKEN}' } } } };
  const a = await member(config);
  const m = await a.clusterMember()!;
  const post = (headers: Record<string, string>) =>
    fetch(`${m.options.advertise}${INTERNAL_PREFIX}s/${'ab'.repeat(16)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.options.keys.auth}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
  const forged = await post({ 'x-lazy-mcp-principal': 'alice', 'x-lazy-mcp-credentials': 'c1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  expect(forged.status).toBe(400);
  expect(await forged.text()).toContain('the instance credentials (x-lazy-mcp-credentials) are forged, expired or for another principal');
});
