import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpClient, type ProtocolEra } from '../../src/index.js';
import { createHttpChannel } from '../../src/transport/http/create-http-channel.js';
import type { Conn } from './clients.js';
import { placed } from './pin.js';
import type { Placement } from './placement.js';
import type { Plan } from './plan.js';
import { Figure, type Metric } from './runs.js';
import { childEnv, packageFixtureServer } from './setup.js';
import { closeAll, inFlightRuns } from './throughput.js';

/** Variant names of figure 8 (one SDK v2 server, both eras) and figure 9 (HTTP). */
export const ERA_2026 = 'McpClient, 2026 era';
export const ERA_LEGACY = 'McpClient, legacy era';
export const HTTP_OURS = 'McpClient, legacy era';
export const HTTP_OURS_2026 = 'McpClient, 2026 era';
export const HTTP_SDK2 = 'sdk v2';

async function mcpClient(open: () => Promise<McpClient>, era: ProtocolEra, label: string): Promise<Conn> {
  const c = await open();
  if (c.era !== era) {
    await c.close();
    throw new Error(`${label}: negotiated the ${c.era} era, not ${era}`);
  }
  return { pid: c.pid, call: (tool, args) => c.callTool(tool, args), close: () => c.close() };
}

/**
 * Figure 8: McpClient against the SDK v2 server of both eras (`sdk2-modern-server.mjs
 * --dual`, one child per client), the 2026 era (per-request `_meta`, `resultType`)
 * beside the legacy era, 64 in flight.
 */
export async function eraFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const server = packageFixtureServer('sdk2-modern-server.mjs', '--dual');
  const config = { command: server.command, args: server.args, env: server.env };
  const conns = new Map<string, Conn>();
  try {
    conns.set(ERA_2026, await placed(where.children, () => mcpClient(() => McpClient.connect(config, { name: 'bench', era: '2026' }), '2026', ERA_2026), where.host));
    conns.set(ERA_LEGACY, await placed(where.children, () => mcpClient(() => McpClient.connect(config, { name: 'bench' }), 'legacy', ERA_LEGACY), where.host));
    const figure = new Figure(8)
      .define('era-inflight', `SDK v2 server (both eras, stdio): echo calls, ${plan.inflight} in flight`, 'calls/s', 'higher')
      .define('era-inflight-cpu', 'SDK v2 server (both eras, stdio): host CPU time per call', 'µs', 'lower');
    log(`figure 8: the 2026 era beside the legacy era, ${plan.inflight} in flight, ${plan.rounds} runs each`);
    await inFlightRuns(figure, 'era-inflight', conns, plan, log, { warmUp: 2000, cpu: true });
    return figure.list();
  } finally {
    await closeAll(conns);
  }
}

/** The HTTP server child (`http-server.ts`), started on `where.children`: its URL and how to stop it. */
async function startHttpServer(where: Placement): Promise<{ url: string; stop(): Promise<number> }> {
  const script = fileURLToPath(new URL('./http-server.js', import.meta.url));
  const child = await placed(where.children, async () => spawn(process.execPath, [script], { env: childEnv, stdio: ['pipe', 'pipe', 'inherit'] }), where.host);
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let rest = '';
  let stopping: Promise<number> | undefined;
  const stop = () => (stopping ??= stopNow());
  const stopNow = async () => {
    child.stdout?.on('data', (chunk: Buffer) => (rest += chunk.toString('utf8')));
    child.stdin?.end();
    const timer = setTimeout(kill, 5000);
    await exited;
    clearTimeout(timer);
    process.off('exit', kill);
    return Number(/connections (\d+)/.exec(rest)?.[1] ?? NaN);
  };
  try {
    return { url: await firstLine(child, 30_000), stop };
  } catch (error) {
    kill();
    await exited;
    process.off('exit', kill);
    throw error;
  }
}

function firstLine(child: ChildProcess, ms: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(text.slice(0, text.indexOf('\n')).trim());
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) done();
    };
    const onExit = (code: number | null) => done(new Error(`the HTTP server exited (${code}) before listening`));
    const timer = setTimeout(() => done(new Error(`the HTTP server did not listen within ${ms} ms`)), ms);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Figure 9: one SDK v2 Streamable HTTP server on 127.0.0.1 (a child on the children's
 * CPU), 64 in flight: McpClient over lazy-mcp's HTTP channel in the legacy era (the
 * SDK v2 client's default) and in the 2026 era (ours by default over HTTP), and the SDK
 * v2 client with its StreamableHTTPClientTransport. Both use Node's fetch, whose pool
 * keeps connections alive across calls.
 */
export async function httpFigure(plan: Plan, where: Placement, log: (text: string) => void): Promise<Metric[]> {
  const server = await startHttpServer(where);
  const conns = new Map<string, Conn>();
  try {
    const open = (era: ProtocolEra) => () => McpClient.over(createHttpChannel({ transport: 'http', url: server.url }, { name: 'bench' }), { name: 'bench', era });
    conns.set(HTTP_OURS, await mcpClient(open('legacy'), 'legacy', HTTP_OURS));
    conns.set(HTTP_OURS_2026, await mcpClient(open('2026'), '2026', HTTP_OURS_2026));
    const sdk = new ClientV2({ name: 'bench', version: '0.0.0' });
    await sdk.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    conns.set(HTTP_SDK2, { pid: Number.NaN, call: (tool, args) => sdk.callTool({ name: tool, arguments: args }), close: () => sdk.close() });
    const figure = new Figure(9)
      .define('http-inflight', `Streamable HTTP, one SDK v2 server: echo calls, ${plan.inflight} in flight`, 'calls/s', 'higher')
      .define('http-inflight-cpu', 'Streamable HTTP: host (client) CPU time per call', 'µs', 'lower')
      .define('http-sockets', 'Streamable HTTP: TCP connections the server accepted over the figure, all clients', 'count', 'none');
    log(`figure 9: HTTP on ${server.url}, ${plan.inflight} in flight, ${conns.size} clients × ${plan.rounds} runs`);
    // The SDK's HTTP server answers a few hundred calls/s here: a shorter warm-up.
    await inFlightRuns(figure, 'http-inflight', conns, plan, log, { warmUp: 600, cpu: true });
    await closeAll(conns);
    conns.clear();
    const sockets = await server.stop();
    if (!Number.isFinite(sockets)) throw new Error('the HTTP server did not say how many connections it accepted');
    figure.record('http-sockets', 'all clients', sockets);
    return figure.list();
  } finally {
    await closeAll(conns);
    await server.stop();
  }
}
