import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { McpClient } from '../../src/index.js';
import { resolveCluster } from '../../src/share/cluster/options.js';
import { DEATH_SEEN_WITHIN_MS } from '../../src/share/cluster/membership.js';
import { createHttpChannel } from '../../src/transport/http/create-http-channel.js';
import type { Plan } from './plan.js';
import { Figure, type Metric } from './runs.js';
import { freePort } from './gateway-procs.js';
import { childEnv, fixtureServer, repoRoot } from './setup.js';
import { now, quantile, since } from './stats.js';

/** Variant names of figure 14 (issue 30: one pool per cluster, on Redis). */
export const CLUSTER_ON = 'three members, one Redis';
export const CLUSTER_OFF = 'three gateways, no cluster';
export const ON_OWNER = 'called on the owner';
export const OFF_OWNER = 'called on another member';

const cli = join(repoRoot, 'dist/cli/main.js');
const SECRET = 'bench-cluster-secret-0123456789abcdef-0123456789';
/** Every server of this figure runs with this argument: its processes are counted (and reaped) by it. */
const MARK = 'lazy-mcp-bench-cluster';
const MEMBERS = 3;

/** The redis-server on PATH (or Debian's), or undefined: the figure is then skipped. */
export function redisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'].filter((dir) => dir.startsWith('/'));
  return dirs.map((dir) => join(dir, 'redis-server')).find((path) => existsSync(path));
}

/**
 * Figure 14: three `lazy-mcp serve --http` gateways on this machine. (a) Server processes
 * in all when each gateway's client calls each of N servers, with the cluster (one Redis)
 * and without. (b) The same echo call made on a member that is not the server's owner
 * (relayed over the members' HTTP) against on its owner: sequential p50 and calls/s with
 * 64 in flight, alternating. (c) An owner SIGKILLed: time until every other member's view
 * drops it (no calls meanwhile), and time until its server answers again through a
 * surviving member (calling all along).
 */
export async function clusterFigure(plan: Plan, log: (text: string) => void): Promise<Metric[]> {
  const redisPath = redisServer();
  if (!redisPath) {
    log('figure 14 skipped: redis-server is not installed (apt-get install redis-server)');
    return [];
  }
  const figure = new Figure(14)
    .define('cluster-procs', `${MEMBERS} gateways × ${plan.clusterServers} stdio servers, each called through every gateway: server processes`, 'count', 'lower')
    .define('cluster-p50', 'one echo call through a cluster member, sequential: p50', 'ms', 'lower')
    .define('cluster-inflight', `echo calls through a cluster member, ${plan.inflight} in flight`, 'calls/s', 'higher')
    .define('cluster-death-seen', "an owner SIGKILLed: until every other member's view has dropped it (no calls meanwhile)", 'ms', 'lower')
    .define('cluster-failover', 'an owner SIGKILLed: until its server answers again on the next owner (calling all along)', 'ms', 'lower');
  const work = mkdtempSync(join(tmpdir(), 'lazy-mcp-bench-cluster-'));
  const gateways = new Set<Gateway>();
  let redis: ChildProcess | undefined;
  try {
    const port = await freePort();
    redis = spawn(redisPath, ['--port', String(port), '--bind', '127.0.0.1', '--dir', work, '--save', '', '--appendonly', 'no'], { env: childEnv, stdio: 'ignore' });
    await until(() => pings(port), 10_000, 'redis-server did not answer PING');
    const redisUrl = `redis://127.0.0.1:${port}`;
    // (a) processes, without the cluster and with it; the cluster's members stay for (b) and (c).
    const config = join(work, 'servers.json');
    const servers = Object.fromEntries(Array.from({ length: plan.clusterServers }, (_, i) => [`s${i}`, fixtureServer('bench-echo-server.mjs', MARK, `s${i}`)]));
    writeFileSync(config, JSON.stringify({ mcpServers: servers }));
    const start = async (cluster: boolean) => {
      const gateway = await Gateway.start(config, cluster ? redisUrl : undefined, work);
      gateways.add(gateway);
      return gateway;
    };
    const stop = async (which: Iterable<Gateway>, signal: NodeJS.Signals = 'SIGTERM') => {
      for (const g of [...which]) {
        await g.stop(signal);
        gateways.delete(g);
      }
    };
    let members: Gateway[] = [];
    for (const cluster of [false, true]) {
      const variant = cluster ? CLUSTER_ON : CLUSTER_OFF;
      log(`figure 14: ${variant}, ${plan.clusterServers} servers called through each`);
      members = await Promise.all(Array.from({ length: MEMBERS }, () => start(cluster)));
      if (cluster) await allSee(members, MEMBERS);
      for (const g of members) await Promise.all(Array.from({ length: plan.clusterServers }, (_, i) => g.echo(`s${i}`)));
      figure.record('cluster-procs', variant, serverProcesses().length);
      if (!cluster) await stop(members);
    }

    // (b) on the owner against on another member, side by side.
    const owner = ownerOf(members);
    const other = members.find((m) => m !== owner)!;
    log(`figure 14: on the owner against on another member, ${plan.clusterRounds} alternating rounds of ${plan.clusterCalls} calls`);
    const pair: [string, Gateway][] = [
      [ON_OWNER, owner],
      [OFF_OWNER, other],
    ];
    for (const [, g] of pair) for (let i = 0; i < Math.min(200, plan.clusterCalls); i++) await g.echo('s0'); // JIT and sockets warm
    for (let round = 0; round < plan.clusterRounds; round++) {
      for (const [variant, g] of round % 2 === 0 ? pair : [...pair].reverse()) {
        const times: number[] = [];
        for (let i = 0; i < plan.clusterCalls; i++) {
          const t = now();
          await g.echo('s0');
          times.push(since(t));
        }
        figure.record('cluster-p50', variant, quantile(times.sort((a, b) => a - b), 0.5));
        figure.record('cluster-inflight', variant, await callsPerSecond(g, plan.inflight, plan.clusterCalls * 4));
      }
    }

    // (c) an owner's death, plan.clusterDeaths times each way; a new member replaces it before the next.
    log(`figure 14: ${plan.clusterDeaths} × 2 owners SIGKILLed`);
    const deaths = (['cluster-death-seen', 'cluster-failover'] as const).flatMap((measure) => Array.from({ length: plan.clusterDeaths }, () => measure));
    for (const [index, measure] of deaths.entries()) {
      await members[0].echo('s0');
      const victim = ownerOf(members);
      const survivors = members.filter((m) => m !== victim);
      const killed = now();
      await stop([victim], 'SIGKILL');
      if (measure === 'cluster-death-seen') {
        await until(async () => (await Promise.all(survivors.map((s) => s.health()))).every((h) => !h.members.includes(victim.advertise)), 15_000, 'the survivors did not drop the dead member');
      } else {
        // Calls fail `unavailable` until the server is placed again: the first answer ends the wait.
        await until(() => survivors[0].echo('s0', 5000).then(() => true, () => false), 20_000, 'the server did not answer again');
      }
      figure.record(measure, CLUSTER_ON, since(killed));
      if (index === deaths.length - 1) break;
      members = [...survivors, await start(true)];
      await allSee(members, MEMBERS);
    }
    log(`figure 14: deaths seen within ${DEATH_SEEN_WITHIN_MS} ms by design (member key TTL + one refresh)`);
  } finally {
    await Promise.all([...gateways].map((g) => g.stop('SIGKILL')));
    redis?.kill('SIGKILL');
    kill(serverProcesses());
    rmSync(work, { recursive: true, force: true });
  }
  return figure.list();
}

/** One `lazy-mcp serve --http` process and the client the bench calls it with. */
class Gateway {
  private constructor(
    readonly child: ChildProcess,
    readonly advertise: string,
    private readonly client: McpClient,
  ) {}

  static async start(config: string, redis: string | undefined, work: string): Promise<Gateway> {
    const port = await freePort();
    const advertise = `http://127.0.0.1:${port}`;
    const cluster = redis ? ['--cluster', redis, '--advertise', advertise] : [];
    const child = spawn(process.execPath, [cli, 'serve', '--http', '--port', String(port), '--config', config, ...cluster], {
      cwd: work,
      env: { ...childEnv, LAZY_MCP_CLUSTER_SECRET: SECRET, LAZY_MCP_RUNTIME_DIR: work },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await until(async () => stderr.includes('listening on') || child.exitCode !== null, 30_000, 'a gateway did not listen');
    if (child.exitCode !== null) throw new Error(`a gateway exited ${child.exitCode}: ${stderr}`);
    const client = await McpClient.over(createHttpChannel({ transport: 'http', url: `${advertise}/mcp` }, { name: 'bench' }), { name: 'bench', era: 'legacy' });
    return new Gateway(child, advertise, client);
  }

  echo(server: string, timeout?: number): Promise<unknown> {
    return this.client.callTool(`mcp__${server}__echo`, { text: 'x' }, timeout === undefined ? {} : { timeout });
  }

  /** What this member sees of the cluster (its internal endpoint, members only). */
  async health(): Promise<{ members: string[]; running: string[] }> {
    const response = await fetch(`${this.advertise}/.lazy-mcp/cluster/health`, { headers: { authorization: `Bearer ${auth}` } });
    return (await response.json()) as { members: string[]; running: string[] };
  }

  /** Ends it; the servers it ran that outlive it (SIGKILL leaves them to their stdin's end) are ended too. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    await this.client.close().catch(() => undefined);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const servers = serverProcesses().filter((pid) => parentOf(pid) === this.child.pid);
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
    kill(servers);
  }
}

const auth = resolveCluster({ redis: 'redis://x', advertise: 'http://x', secret: SECRET }).keys.auth;

/** The member whose child the (one) live process of s0 is. */
function ownerOf(members: readonly Gateway[]): Gateway {
  for (const pid of serverProcesses('s0')) {
    const owner = members.find((m) => m.child.pid === parentOf(pid));
    if (owner) return owner;
  }
  throw new Error('no member runs s0');
}

function parentOf(pid: number): number | undefined {
  try {
    return Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  } catch {
    return undefined;
  }
}

async function allSee(members: readonly Gateway[], count: number): Promise<void> {
  await until(async () => (await Promise.all(members.map((m) => m.health()))).every((h) => h.members.length === count), 15_000, 'the members did not all see each other');
}

async function callsPerSecond(gateway: Gateway, inflight: number, calls: number): Promise<number> {
  let sent = 0;
  const t = now();
  const lane = async () => {
    while (sent < calls) {
      sent++;
      await gateway.echo('s0');
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
  return calls / (since(t) / 1000);
}

/** Live processes of this figure's servers (of one server when named). */
function serverProcesses(server?: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = args.indexOf(MARK);
      if (at < 0 || (server !== undefined && args[at + 1] !== server)) continue;
      if (!/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

function kill(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => (socket.destroy(), resolve(chunk.toString().startsWith('+PONG'))));
  });
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
