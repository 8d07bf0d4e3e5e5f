// Figure 11's latency and throughput alone, for before/after work on the daemon's relay:
// a dev tool, not part of `npm run bench`. One `lazy-mcp serve` attached to the pool
// daemon and one `--no-shared`, side by side, alternating round by round: sequential
// p50 and calls/s at 64 in flight, their ratios per round, and the CPU each process
// spent per call at 64 in flight (from /proc). Usage (after `npm run build` and
// `npx tsc -p tsconfig.bench.json`):
//   node dist-bench/scripts/bench/relay.js [--rounds N] [--calls N] [--cpus 0-1] [--prof DIR] [--seq] [--floor]
// With --prof, the daemon (started here) and both serve processes write V8 CPU profiles to DIR.
// With --floor, a third serve --no-shared runs in the same rounds with a Node process between
// it and the server that only copies bytes both ways: the least any relay process on the path
// costs, so that what the daemon adds beyond it shows (sequential p50 floor ÷ no-shared).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { McpClient } from '../../src/index.js';
import { daemonStatus, stopDaemon } from '../../src/share/daemon/control.js';
import { daemonPaths } from '../../src/share/daemon/paths.js';
import { connectSocket } from '../../src/share/daemon/probe.js';
import { ALL_CPUS, pin } from './pin.js';
import { childEnv, fixtureServer, packageVersion, repoRoot } from './setup.js';
import { now, quantile, since, summarize } from './stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '400' },
    inflight: { type: 'string', default: '64' },
    cpus: { type: 'string', default: ALL_CPUS },
    prof: { type: 'string' },
    /** Sequential calls only (for a profile of the latency path). */
    seq: { type: 'boolean', default: false },
    /** A third column: serve --no-shared through a process that only copies bytes (see above). */
    floor: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const calls = Number(values.calls);
const inflight = Number(values.inflight);
const prof = values.prof === undefined ? undefined : resolve(values.prof);
if (prof) mkdirSync(prof, { recursive: true });
pin(values.cpus);

const cli = join(repoRoot, 'dist/cli/main.js');
const version = packageVersion('package.json');
const work = mkdtempSync(join(tmpdir(), 'lazy-mcp-relay-'));
const runtimeDir = join(work, 'rt');
mkdirSync(runtimeDir, { mode: 0o700 });
const config = join(work, 'one.json');
const echoServer = fixtureServer('bench-echo-server.mjs');
writeFileSync(config, JSON.stringify({ mcpServers: { s0: echoServer } }));
/** The floor's config: the same server behind a Node process that copies bytes and nothing else (no framing, no JSON). */
const copying = join(work, 'copying.json');
const COPY = `const c = require('node:child_process').spawn(process.execPath, process.argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (b) => c.stdin.write(b)); c.stdout.on('data', (b) => process.stdout.write(b));
process.stdin.on('end', () => c.stdin.end()); c.on('exit', (code) => process.exit(code ?? 1));`;
writeFileSync(copying, JSON.stringify({ mcpServers: { s0: { ...echoServer, args: ['-e', COPY, ...echoServer.args] } } }));
const profArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];

if (prof) {
  // Started here, so that it profiles; serve finds it listening and attaches.
  const paths = daemonPaths({ runtimeDir }, version);
  const daemon = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${prof}`, join(repoRoot, 'dist/share/daemon/main.js'), '--runtime-dir', paths.dir, '--version', version, '--idle-ms', '120000', '--log', paths.log], {
    stdio: 'ignore',
    env: childEnv,
    detached: true,
  });
  daemon.unref();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const socket = await connectSocket(paths.socket).catch(() => undefined);
    if (socket) {
      socket.destroy();
      break;
    }
    if (Date.now() > deadline) throw new Error('the daemon did not listen');
    await sleep(20);
  }
}

const serve = (shared: boolean, through = config) =>
  McpClient.connect(
    {
      command: process.execPath,
      args: [...profArgs, cli, 'serve', '--config', through, ...(shared ? [] : ['--no-shared'])],
      env: { ...childEnv, LAZY_MCP_RUNTIME_DIR: runtimeDir, LAZY_MCP_DAEMON_IDLE_MS: '120000' },
    },
    { name: 'serve', timeout: 60_000 },
  );
const echo = (c: McpClient) => c.callTool('mcp__s0__echo', { text: 'x' });

const SHARED = 'shared';
const OWN = 'no-shared';
const FLOOR = 'floor';
const variants = values.floor ? [SHARED, OWN, FLOOR] : [SHARED, OWN];
const pair: Record<string, McpClient> = { [SHARED]: await serve(true), [OWN]: await serve(false), ...(values.floor ? { [FLOOR]: await serve(false, copying) } : {}) };
const p50: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const rate: Record<string, number[]> = Object.fromEntries(variants.map((v) => [v, []]));
const p50Ratio: number[] = [];
/** With --floor: the floor's p50 ÷ no-shared's, and shared's ÷ the floor's, per round. */
const floorRatio: number[] = [];
const aboveFloor: number[] = [];
const rateRatio: number[] = [];
/** CPU µs per call at 64 in flight, per process role. */
const cpu: Record<string, number[]> = {};
/** CPU µs per call of the sequential calls, per process role (schedstat: ns, every thread). */
const seqCpu: Record<string, number[]> = {};
/** Times each process was put on a CPU per sequential call (schedstat's timeslices: its wake-ups), per process role. */
const seqRuns: Record<string, number[]> = {};
/** Mean wall time of a sequential call (ms): the CPU per call above is spent within it. */
const seqMean: Record<string, number[]> = {};
/** Read and write syscalls per call at 64 in flight, per process role: [reads, writes] of each round, in turn. */
const syscalls: Record<string, number[]> = {};

try {
  for (const c of Object.values(pair)) for (let i = 0; i < 200; i++) await echo(c);
  if (!values.seq) for (const c of Object.values(pair)) await inFlight(c, 2000);
  const daemonPid = (await daemonStatus({ runtimeDir, version }))?.pid;
  const serverPid = (c: McpClient) => childrenOf(c.pid).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bench-echo-server'));
  const roles: Record<string, [string, number | undefined][]> = {
    [SHARED]: [['serve', pair[SHARED].pid], ['daemon', daemonPid], ['server', serverOfDaemon(daemonPid)]],
    [OWN]: [['serve', pair[OWN].pid], ['server', serverPid(pair[OWN])]],
  };
  if (values.floor) {
    const copier = childrenOf(pair[FLOOR].pid)[0];
    roles[FLOOR] = [['serve', pair[FLOOR].pid], ['copier', copier], ['server', copier === undefined ? undefined : childrenOf(copier)[0]]];
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    const got: Record<string, { p50: number; rate: number }> = {};
    for (const variant of order) {
      const c = pair[variant];
      const times: number[] = [];
      const seqBefore = roles[variant].map(([, pid]) => sched(pid));
      for (let i = 0; i < calls; i++) {
        const t = now();
        await echo(c);
        times.push(since(t));
      }
      roles[variant].forEach(([role, pid], i) => {
        const after = sched(pid);
        (seqCpu[`${variant} ${role}`] ??= []).push((after.ns - seqBefore[i].ns) / 1e3 / calls);
        (seqRuns[`${variant} ${role}`] ??= []).push((after.runs - seqBefore[i].runs) / calls);
      });
      const before = roles[variant].map(([, pid]) => ticks(pid));
      const ioBefore = roles[variant].map(([, pid]) => io(pid));
      const selfBefore = process.cpuUsage();
      const n = values.seq ? 0 : calls * 4;
      const r = n === 0 ? NaN : await inFlight(c, n);
      const self = process.cpuUsage(selfBefore);
      roles[variant].forEach(([role, pid], i) => {
        (cpu[`${variant} ${role}`] ??= []).push(((ticks(pid) - before[i]) * 1e4) / n);
        const after = io(pid);
        (syscalls[`${variant} ${role}`] ??= []).push((after.r - ioBefore[i].r) / n, (after.w - ioBefore[i].w) / n);
      });
      (cpu[`${variant} client`] ??= []).push((self.user + self.system) / n);
      (seqMean[variant] ??= []).push(times.reduce((a, b) => a + b, 0) / times.length);
      got[variant] = { p50: quantile(times.sort((a, b) => a - b), 0.5), rate: r };
      p50[variant].push(got[variant].p50);
      rate[variant].push(r);
    }
    p50Ratio.push(got[SHARED].p50 / got[OWN].p50);
    if (values.floor) {
      floorRatio.push(got[FLOOR].p50 / got[OWN].p50);
      aboveFloor.push(got[SHARED].p50 / got[FLOOR].p50);
    }
    rateRatio.push(got[SHARED].rate / got[OWN].rate);
    process.stderr.write(
      `round ${round}: p50 ${got[SHARED].p50.toFixed(3)} / ${got[OWN].p50.toFixed(3)} ms = ${p50Ratio.at(-1)!.toFixed(2)}×; ` +
        `${inflight} in flight ${got[SHARED].rate.toFixed(0)} / ${got[OWN].rate.toFixed(0)} calls/s = ${rateRatio.at(-1)!.toFixed(2)}×\n`,
    );
  }
} finally {
  await Promise.all(Object.values(pair).map((c) => c.close()));
  await stopDaemon({ runtimeDir, version }).catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

const show = (label: string, values: number[], digits = 2) => {
  const s = summarize(values);
  return `${label}: median ${s.median.toFixed(digits)} (${s.min.toFixed(digits)} – ${s.max.toFixed(digits)}, n ${s.n})`;
};
console.log(show('p50 ratio (shared ÷ no-shared, target ≤ 1.3)', p50Ratio));
if (values.floor) {
  console.log(show('p50 floor ratio (no-shared through a byte copier ÷ no-shared)', floorRatio));
  console.log(show('p50 shared ÷ floor', aboveFloor));
}
console.log(show(`${inflight} in flight ratio (shared ÷ no-shared, target ≥ 0.7)`, rateRatio));
for (const variant of variants) console.log(`  ${variant}: ${show('p50 ms', p50[variant], 3)}; ${show('calls/s', rate[variant], 0)}`);
for (const variant of variants) console.log(`  ${variant}: ${show('sequential mean ms', seqMean[variant]!, 3)}`);
console.log('CPU µs per call, sequential (median):');
for (const [role, values] of Object.entries(seqCpu)) console.log(`  ${role}: ${summarize(values).median.toFixed(1)}; on a CPU ${summarize(seqRuns[role]!).median.toFixed(2)} times a call`);
console.log(`CPU µs per call at ${inflight} in flight (median):`);
for (const [role, values] of Object.entries(cpu)) {
  const io = syscalls[role] ?? [];
  const reads = summarize(io.filter((_, i) => i % 2 === 0)).median;
  const writes = summarize(io.filter((_, i) => i % 2 === 1)).median;
  console.log(`  ${role}: ${summarize(values).median.toFixed(1)}${io.length ? `; read syscalls ${reads.toFixed(2)}, writes ${writes.toFixed(2)} per call` : ''}`);
}

async function inFlight(client: McpClient, total: number): Promise<number> {
  let sent = 0;
  const t = now();
  const lane = async () => {
    while (sent < total) {
      sent++;
      await echo(client);
    }
  };
  await Promise.all(Array.from({ length: inflight }, lane));
  return total / (since(t) / 1000);
}

/** CPU time (ns) and times put on a CPU of every thread of `pid` so far (/proc/PID/task/TID/schedstat). */
function sched(pid: number | undefined): { ns: number; runs: number } {
  const total = { ns: 0, runs: 0 };
  if (pid === undefined) return total;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [ns, , runs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').trim().split(' ').map(Number);
      total.ns += ns!;
      total.runs += runs!;
    }
  } catch {
    // Gone meanwhile.
  }
  return total;
}

/** utime + stime of `pid`, in clock ticks (1/100 s). */
function ticks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** Read and write syscalls of `pid` so far (/proc/PID/io). */
function io(pid: number | undefined): { r: number; w: number } {
  if (pid === undefined) return { r: 0, w: 0 };
  try {
    const text = readFileSync(`/proc/${pid}/io`, 'latin1');
    return { r: Number(/syscr: (\d+)/.exec(text)?.[1]), w: Number(/syscw: (\d+)/.exec(text)?.[1]) };
  } catch {
    return { r: 0, w: 0 };
  }
}

function childrenOf(parent: number): number[] {
  const out: number[] = [];
  for (const entry of readFileSync(`/proc/${parent}/task/${parent}/children`, 'latin1').trim().split(/\s+/)) if (entry) out.push(Number(entry));
  return out;
}

function serverOfDaemon(daemon: number | undefined): number | undefined {
  return daemon === undefined ? undefined : childrenOf(daemon)[0];
}
