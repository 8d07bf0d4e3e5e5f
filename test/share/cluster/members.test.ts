import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolveCluster } from '../../../src/share/cluster/options.js';
import { join } from 'node:path';
import { isAlive, killLeftovers, repoRoot, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import { callTool, notesConfig, openSession, rpc, SECRET, TestMember, TestRedis } from './support.js';

// Three real `lazy-mcp serve --http --cluster` processes and a real redis-server: the
// server runs once in the cluster whichever member is called, a listing on a fresh member
// spawns nothing, a session continues through any member, and an owner's SIGKILL costs
// only the calls in flight on it.

let redis: TestRedis;
const members: TestMember[] = [];
const leftovers: number[] = [];

beforeAll(async () => {
  redis = await TestRedis.start();
});

afterEach(async () => {
  // SIGTERM: each member stops the servers it owns, as in production.
  await Promise.all(members.splice(0).map((m) => m.stop('SIGTERM')));
  killLeftovers(leftovers);
});

afterAll(async () => {
  await redis.stop();
});

async function cluster(count: number) {
  const config = notesConfig();
  members.push(...(await Promise.all(Array.from({ length: count }, () => TestMember.start(config.path, redis)))));
  // Every member sees every other before the test places anything (joins are seen within a refresh).
  await until(async () => (await Promise.all(members.map(health))).every((seen) => seen.members.length === count), 10_000);
  const pids = () => readdirSync(config.pids).map(Number);
  return { config, pids };
}

const textOf = (answer: Awaited<ReturnType<typeof callTool>>) => ((answer.body?.result?.content as { text: string }[] | undefined) ?? [])[0]?.text;

it('one process per server whichever member is called; a listing on a fresh member spawns nothing', async () => {
  const { config, pids } = await cluster(3);
  const answers = [];
  for (const member of members) {
    const session = await openSession(member.url);
    answers.push(textOf(await callTool(member.url, session, 'mcp__notes__pid')));
  }
  expect(new Set(answers).size).toBe(1);
  expect(pids()).toEqual([Number(answers[0])]);
  leftovers.push(...pids());

  const fresh = await TestMember.start(config.path, redis);
  members.push(fresh);
  const session = await openSession(fresh.url);
  const listed = await rpc(fresh.url, { id: 2, method: 'tools/list' }, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
  expect((listed.body?.result?.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(['mcp__notes__pid', 'mcp__notes__slow']);
  expect(pids()).toEqual([Number(answers[0])]);
}, 60_000);

it("a session's requests continue through another member; a forged session id is refused", async () => {
  await cluster(3);
  const [a, b] = members;
  const session = await openSession(a.url);
  const viaB = await callTool(b.url, session, 'mcp__notes__pid');
  expect(viaB.status).toBe(200);
  expect(textOf(viaB)).toMatch(/^\d+$/);
  leftovers.push(Number(textOf(viaB)));
  const forged = await callTool(b.url, `${session.slice(0, -4)}AAAA`, 'mcp__notes__pid');
  expect(forged.status).toBe(404);
  expect(forged.body?.error?.message).toMatch(/not issued by this cluster/);
  const stranger = await callTool(b.url, 'c1.not-sealed-at-all', 'mcp__notes__pid');
  expect(stranger.status).toBe(404);
}, 60_000);

it("SIGKILL of the owner mid-call: that call fails unavailable, the next works on the new owner", async () => {
  const { config, pids } = await cluster(3);
  const [caller] = members;
  const session = await openSession(caller.url);
  const first = Number(textOf(await callTool(caller.url, session, 'mcp__notes__pid')));
  leftovers.push(first);
  // The owner is the member whose child the server process is.
  const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${first}/status`, 'utf8'))![1]);
  const owner = members.find((m) => m.pid === ppid)!;
  expect(owner).toBeDefined();
  const via = members.find((m) => m !== owner)!;
  const viaSession = via === caller ? session : await openSession(via.url);
  const inFlight = callTool(via.url, viaSession, 'mcp__notes__slow', { ms: 20_000 });
  // Mid-call: the server has begun it.
  expect(await waitFor(() => existsSync(join(config.pids, '..', 'busy')), 10_000)).toBe(true);
  const killedAt = Date.now();
  await owner.stop('SIGKILL');
  const failed = await inFlight;
  process.stderr.write(`failed after ${Date.now() - killedAt} ms: ${JSON.stringify(failed)}\n`);
  expect(failed.body?.error?.message).toMatch(/unavailable|lost the cluster member/);
  expect((failed.body?.error?.data as { code?: string } | undefined)?.code).toBe('unavailable');
  // The next call is placed again: on a loaded machine the first attempts may still find
  // the dead owner in a view (a death is seen within 2.5 s); each of those fails
  // `unavailable`, never anything else, and one works within the bound.
  let next = await callTool(via.url, viaSession, 'mcp__notes__pid');
  while (textOf(next) === undefined && Date.now() - killedAt < 10_000) {
    expect((next.body?.error?.data as { code?: string } | undefined)?.code ?? (next.body?.result as { isError?: boolean } | undefined)?.isError).toBeTruthy();
    await new Promise((r) => setTimeout(r, 100));
    next = await callTool(via.url, viaSession, 'mcp__notes__pid');
  }
  const movedIn = Date.now() - killedAt;
  expect(textOf(next)).toMatch(/^\d+$/);
  const second = Number(textOf(next));
  leftovers.push(...pids());
  expect(second).not.toBe(first);
  expect(movedIn).toBeLessThan(10_000);
  process.stderr.write(`cluster: owner SIGKILL -> next call answered on the new owner in ${movedIn} ms\n`);
  expect(await waitFor(() => isAlive(second), 100)).toBe(true);
}, 60_000);

it('Redis stopped: what is placed keeps serving, what is not is refused clearly; Redis back: placing works again', async () => {
  const config = notesConfig();
  // A second server (other args: another fingerprint), left unplaced until Redis is gone.
  const parsed = JSON.parse(readFileSync(config.path, 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> };
  parsed.mcpServers.other = { ...parsed.mcpServers.notes, args: [...parsed.mcpServers.notes.args, 'other'] };
  writeFileSync(config.path, JSON.stringify(parsed));
  members.push(...(await Promise.all([0, 1].map(() => TestMember.start(config.path, redis)))));
  const [a] = members;
  const session = await openSession(a.url);
  const before = textOf(await callTool(a.url, session, 'mcp__notes__pid'));
  expect(before).toMatch(/^\d+$/);
  leftovers.push(...readdirSync(config.pids).map(Number));
  await redis.stop();
  try {
    await until(async () => (await health(a)).healthy === false, 8000);
    const still = await callTool(a.url, session, 'mcp__notes__pid');
    expect(textOf(still)).toBe(before);
    const refused = await callTool(a.url, session, 'mcp__other__pid');
    expect(refused.body?.error?.message).toMatch(/cannot place the server: the cluster's Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/);
  } finally {
    await redis.start();
  }
  await until(async () => {
    const seen = await health(a);
    return seen.healthy && seen.members.length === 2;
  }, 8000);
  // The refused start left `other` backing off for a moment: the next call after it places it.
  let placed: string | undefined;
  await until(async () => {
    placed = textOf(await callTool(a.url, session, 'mcp__other__pid'));
    return placed !== undefined;
  }, 10_000);
  leftovers.push(...readdirSync(config.pids).map(Number));
  expect(placed).toMatch(/^\d+$/);
  expect(textOf(await callTool(a.url, session, 'mcp__notes__pid'))).toBe(before);
}, 60_000);

/** What a member sees of the cluster (its internal health endpoint, members only). */
async function health(member: TestMember): Promise<{ id: string; healthy: boolean; members: string[]; running: string[] }> {
  const auth = resolveCluster({ redis: 'redis://x', advertise: 'http://x', secret: SECRET }).keys.auth;
  const response = await fetch(`http://127.0.0.1:${member.port}/.lazy-mcp/cluster/health`, { headers: { authorization: `Bearer ${auth}` } });
  return (await response.json()) as { id: string; healthy: boolean; members: string[]; running: string[] };
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it("a 2026 call's input rounds continue through another member: the sealed requestState routes the retry back; a forged one is refused", async () => {
  const dir = notesConfig();
  writeFileSync(dir.path, JSON.stringify({ mcpServers: { hf: { command: process.execPath, args: [join(repoRoot, 'test/fixtures/host-features.mjs')] } } }));
  members.push(...(await Promise.all([0, 1].map(() => TestMember.start(dir.path, redis)))));
  const [a, b] = members;
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
  const headers = { 'mcp-protocol-version': '2026-07-28' };
  const first = await rpc(a.url, { id: 1, method: 'tools/call', params: { name: 'mcp__hf__ask', arguments: { message: 'Who?' }, _meta: meta } }, headers);
  expect(first.body?.result).toMatchObject({ resultType: 'input_required', inputRequests: { q1: { method: 'elicitation/create' } } });
  const state = (first.body!.result as { requestState: string }).requestState;
  expect(state).toMatch(/^c1\./);
  const done = await rpc(b.url, { id: 2, method: 'tools/call', params: { name: 'mcp__hf__ask', arguments: { message: 'Who?' }, requestState: state, inputResponses: { q1: { action: 'accept', content: { name: 'Bo' } } }, _meta: meta } }, headers);
  expect(JSON.stringify(done.body?.result)).toContain('Bo');
  const forged = await rpc(b.url, { id: 3, method: 'tools/call', params: { name: 'mcp__hf__ask', arguments: {}, requestState: `${state.slice(0, -4)}AAAA`, inputResponses: {}, _meta: meta } }, headers);
  expect(forged.status).toBe(400);
  expect(forged.body?.error?.message).toMatch(/requestState was not issued by this cluster/);
}, 60_000);

it('a member joining takes the servers it now owns at their next use; the old owner drains and stops its process', async () => {
  // Six servers (one pids folder each), so that some surely move when three members join:
  // rendezvous leaves each with the first member at a chance of 1 in 4, all six at 1 in 4096.
  const dir = tempDir('lazy-mcp-cluster-join-');
  const names = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];
  const pidsOf = (name: string) => join(dir, name);
  for (const name of names) mkdirSync(pidsOf(name));
  const path = join(dir, 'mcp.json');
  writeFileSync(path, JSON.stringify({ mcpServers: Object.fromEntries(names.map((name) => [name, { command: process.execPath, args: [join(repoRoot, 'test/fixtures/notes-pid.mjs'), pidsOf(name)] }])) }));
  const first = await TestMember.start(path, redis);
  members.push(first);
  const session = await openSession(first.url);
  const pidOf = async (name: string) => Number(textOf(await callTool(first.url, session, `mcp__${name}__pid`)));
  const before = new Map<string, number>();
  for (const name of names) before.set(name, await pidOf(name));
  leftovers.push(...before.values());
  const joined = await Promise.all([0, 1, 2].map(() => TestMember.start(path, redis)));
  members.push(...joined);
  // The first member places by what it sees: all four members, before the next calls.
  await until(async () => (await health(first)).members.length === 4, 10_000);
  // Each server moves at a use after the new owner is seen: call them all until some have moved.
  const after = new Map<string, number>();
  await until(async () => {
    for (const name of names) {
      // A call made while the server moves may fail `unavailable`: only an answer counts.
      const pid = await pidOf(name).catch(() => NaN);
      if (Number.isInteger(pid)) after.set(name, pid);
    }
    return names.some((name) => after.has(name) && after.get(name) !== before.get(name));
  }, 30_000);
  leftovers.push(...after.values());
  const moved = names.filter((name) => after.has(name) && after.get(name) !== before.get(name));
  expect(moved.length).toBeGreaterThan(0);
  const joinedPids = joined.map((m) => m.pid);
  for (const name of moved) {
    // Started by one of the members that joined, its new owner ...
    expect(joinedPids).toContain(Number(/PPid:\t(\d+)/.exec(readFileSync(`/proc/${after.get(name)}/status`, 'utf8'))?.[1]));
    // ... and the old process stopped once its calls were over: one process of the server again.
    expect(await waitFor(() => !isAlive(before.get(name)!), 12_000)).toBe(true);
    expect(readdirSync(pidsOf(name)).map(Number).filter(isAlive)).toEqual([after.get(name)]);
  }
}, 180_000);
