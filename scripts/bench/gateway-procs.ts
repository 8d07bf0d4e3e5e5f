// The gateways of figures 12 and 13 as processes: `lazy-mcp serve` (stdio and HTTP) and
// the peers from npm that run on Node 20, `mcp-proxy` (one stdio server behind Streamable
// HTTP, on the SDK v2 server) and `mcp-hub` (many servers behind one HTTP+SSE endpoint).
// Each is started in a process group of its own with the safe environment, so the bench
// ends it and everything it started (its backends) whatever happens.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClient, type ProtocolEra } from '../../src/index.js';
import { DEFAULT_CLIENT_INFO } from '../../src/protocol/client-options.js';
import { resultSchemas } from '../../src/protocol/schemas/lazy-schemas.js';
import { NamedRequest } from '../../src/protocol/session-errors.js';
import { createHttpChannel } from '../../src/transport/http/create-http-channel.js';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION_META_KEY } from '../../src/transport/mcp-constants.js';
import { signalGroup } from '../../src/transport/stdio/process-group.js';
import type { Conn } from './clients.js';
import { isGone, sleep } from './procs.js';
import { childEnv, repoRoot, type ServerSpec } from './setup.js';

export const SERVE_CLI = join(repoRoot, 'dist/cli/main.js');
export const MCP_PROXY_CLI = join(repoRoot, 'node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs');
export const MCP_HUB_CLI = join(repoRoot, 'node_modules/mcp-hub/dist/cli.js');

// What is still to end or remove if the bench exits half way: one exit hook for them all.
const atExit = new Set<() => void>();
process.on('exit', () => {
  for (const undo of atExit) undo();
});

/** A folder of the bench's own, removed at exit. */
export function workDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `lazy-mcp-bench-${prefix}-`));
  atExit.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A config file of `servers` (name → spec), in the `mcpServers` shape every gateway here reads. */
export function writeConfig(dir: string, name: string, servers: Record<string, ServerSpec>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ mcpServers: servers }));
  return path;
}

/** A free TCP port on 127.0.0.1 (the peers take a port, not 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A long-running child in a group of its own: its output so far, and a bounded stop of the whole group. */
export class GroupChild {
  output = '';
  #exited: Promise<void>;
  #stopping?: Promise<void>;
  readonly #kill = () => signalGroup(this.child.pid!, 'SIGKILL');

  private constructor(readonly child: ChildProcess) {
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const keep = (chunk: Buffer) => {
      // Enough to find a start-up line or an error; a chatty peer must not fill memory.
      if (this.output.length < 64 * 1024) this.output += chunk.toString('utf8');
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    atExit.add(this.#kill);
  }

  static start(command: string, args: string[], env: Record<string, string>, cwd?: string): GroupChild {
    // stdin stays open: some peers end when it closes.
    return new GroupChild(spawn(command, args, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves once `test` finds what it looks for in the output (or `probe` says ready); throws past `ms` or on exit. */
  async ready(what: string, ms: number, probe: () => Promise<boolean> | boolean): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await probe()) return;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`${what} exited before it was ready: ${this.output.slice(-2000)}`);
      await sleep(25);
    }
    throw new Error(`${what} was not ready within ${ms} ms: ${this.output.slice(-2000)}`);
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; idempotent. */
  stop(graceMs = 3000): Promise<void> {
    return (this.#stopping ??= (async () => {
      signalGroup(this.pid, 'SIGTERM');
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && !isGone(this.pid)) await sleep(20);
      this.#kill();
      await Promise.race([this.#exited, sleep(graceMs)]);
      atExit.delete(this.#kill);
    })());
  }
}

/** A Conn over an McpClient that must have negotiated `era`; `tool` maps the bench's `echo` to the gateway's public name. */
export async function eraConn(open: () => Promise<McpClient>, era: ProtocolEra, label: string, tool: (name: string) => string, stop?: () => Promise<void>): Promise<Conn> {
  let c: McpClient;
  try {
    c = await open();
  } catch (error) {
    await stop?.();
    throw error;
  }
  if (c.era !== era) {
    await c.close();
    await stop?.();
    throw new Error(`${label}: negotiated the ${c.era} era, not ${era}`);
  }
  return {
    pid: c.pid,
    call: (name, args) => c.callTool(tool(name), args),
    close: async () => {
      await c.close();
      await stop?.();
    },
  };
}

/**
 * The control of the 2026 era's cost: a legacy session whose calls carry the 2026 envelope
 * in `_meta` (with the progress token the engine adds), which our gateway answers in the
 * 2026 shape (checked here) — the bytes of a 2026 call both ways, through the legacy era's
 * client code. 2026 ÷ it is what the 2026 era's own client code costs; it ÷ legacy, what
 * the bytes the 2026 revision puts on the wire cost.
 */
export async function sameBytesConn(open: () => Promise<McpClient>, tool: (name: string) => string): Promise<Conn> {
  const client = await open();
  const schema = resultSchemas().CallToolResultSchema;
  let token = 0;
  const conn: Conn = {
    pid: client.pid,
    call: (name, args) => {
      const _meta = { [PROTOCOL_VERSION_META_KEY]: MODERN_PROTOCOL_VERSION, [CLIENT_INFO_META_KEY]: DEFAULT_CLIENT_INFO, [CLIENT_CAPABILITIES_META_KEY]: {}, progressToken: ++token };
      const named = tool(name);
      // What callTool makes for a call (its scope naming the tool call, its label), so the control differs from it by the bytes only.
      return client.request('tools/call', { name: named, arguments: args, _meta }, schema, 'tools/call', { toolCall: { name: named, arguments: args } }, false, new NamedRequest('tools/call', named));
    },
    close: () => client.close(),
  };
  const answer = (await conn.call('echo', { text: 'hello' })) as { resultType?: unknown };
  if (answer.resultType !== 'complete') {
    await conn.close();
    throw new Error(`the 2026 bytes control got a legacy answer: ${JSON.stringify(answer)}`);
  }
  return conn;
}

const era2026 = (era: ProtocolEra) => (era === '2026' ? { era } : {});

/** `lazy-mcp serve --no-shared` on stdio, its own process; the client given `era`. */
export function serveStdio(config: string, era: ProtocolEra, extra: string[] = []): Promise<McpClient> {
  return McpClient.connect(
    { command: process.execPath, args: [SERVE_CLI, 'serve', '--config', config, '--no-shared', ...extra], env: { ...childEnv } },
    { name: 'bench', timeout: 60_000, ...era2026(era) },
  );
}

/** `lazy-mcp serve --http` on 127.0.0.1 (a port of its choosing): its URL once listening. */
export async function serveHttp(config: string): Promise<{ proc: GroupChild; url: string }> {
  const proc = GroupChild.start(process.execPath, [SERVE_CLI, 'serve', '--http', '--port', '0', '--host', '127.0.0.1', '--config', config], { ...childEnv });
  let url = '';
  try {
    await proc.ready('lazy-mcp serve --http', 30_000, () => {
      url = /listening on (\S+)/.exec(proc.output)?.[1] ?? '';
      return url !== '';
    });
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { proc, url };
}

/** `mcp-proxy` in front of one stdio server, on 127.0.0.1: its Streamable HTTP URL once listening. */
export async function mcpProxy(server: ServerSpec): Promise<{ proc: GroupChild; url: string }> {
  const port = await freePort();
  // mcp-proxy spawns its server with the SDK's default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus its own: it gets the safe allow-list.
  const proc = GroupChild.start(process.execPath, [MCP_PROXY_CLI, '--port', String(port), '--host', '127.0.0.1', '--', server.command, ...server.args], { ...childEnv });
  const url = `http://127.0.0.1:${port}/mcp`;
  try {
    await proc.ready('mcp-proxy', 30_000, async () => /starting server on port/.test(proc.output) && (await accepts(port)));
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { proc, url };
}

/**
 * `mcp-hub` with `config`, on 127.0.0.1: its MCP endpoint (`/mcp`, the HTTP+SSE transport
 * of 2024-11-05) once `/api/health` says every configured server is connected. Its HOME is
 * a folder of its own (it keeps logs and a workspace cache there), its marketplace
 * catalog seeded fresh so that it fetches nothing from the network.
 */
export async function mcpHub(config: string, servers: number): Promise<{ proc: GroupChild; url: string }> {
  const home = workDir('hub-home');
  const cache = join(home, '.local/share/mcp-hub/cache');
  mkdirSync(cache, { recursive: true });
  writeFileSync(join(cache, 'registry.json'), JSON.stringify({ registry: { servers: [{ id: 'bench-none' }] }, lastFetchedAt: Date.now(), serverDocumentation: {} }));
  const env: Record<string, string> = { ...childEnv, HOME: home };
  for (const name of Object.keys(env)) if (name.startsWith('XDG_')) delete env[name];
  const port = await freePort();
  const proc = GroupChild.start(process.execPath, [MCP_HUB_CLI, '--port', String(port), '--config', config], env, home);
  const base = `http://127.0.0.1:${port}`;
  try {
    await proc.ready('mcp-hub', 60_000, async () => {
      try {
        const health = (await (await fetch(`${base}/api/health`)).json()) as { state?: string; servers?: { status?: string }[] };
        return health.state === 'ready' && health.servers?.filter((s) => s.status === 'connected').length === servers;
      } catch {
        return false;
      }
    });
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return { proc, url: `${base}/mcp` };
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** McpClient over Streamable HTTP (`http`) or HTTP+SSE (`sse`) at `url`, in `era`. */
export function httpClient(url: string, transport: 'http' | 'sse', era: ProtocolEra): Promise<McpClient> {
  return McpClient.over(createHttpChannel({ transport, url }, { name: 'bench' }), { name: 'bench', era });
}
