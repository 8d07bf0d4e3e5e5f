import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, connect as tcpConnect } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServerManager } from '../../../src/manager/manager.js';
import { safeEnvironment } from '../../../src/transport/stdio/child-env.js';
import { cliPath } from '../../cli/run-cli.js';
import { isAlive, repoRoot, waitFor } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';

export const SECRET = 'cluster-test-secret-0123456789abcdef-0123456789';

/** A port free now on 127.0.0.1 (the kernel's pick, released for the caller to bind). */
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

/**
 * A test file's managers embedded in one host as members of a cluster (no gateway), on a
 * real Redis started for the file: `member(config)` makes one and waits until it has joined;
 * every manager made or handed to `track` is shut down after each test.
 */
export function embeddedMembers(): { readonly redisUrl: string; member(config: object): Promise<McpServerManager>; track(manager: McpServerManager): void } {
  let redis: TestRedis | undefined;
  const managers: McpServerManager[] = [];
  beforeAll(async () => {
    redis = await TestRedis.start();
  });
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.shutdown()));
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    get redisUrl() {
      return redis!.url;
    },
    track: (manager) => void managers.push(manager),
    async member(config) {
      const port = await freePort();
      const manager = McpServerManager.fromConfig(config, { cluster: { redis: redis!.url, advertise: `http://127.0.0.1:${port}`, secret: SECRET } });
      managers.push(manager);
      await manager.clusterMember();
      return manager;
    },
  };
}

/** Whether something answers Redis's PING on the port. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.on('error', () => resolve(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (text.includes('\r\n')) {
        socket.destroy();
        resolve(text.startsWith('+PONG'));
      }
    });
  });
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A real redis-server on a free loopback port, its files in a temp folder; stop() and start() again on the same port. */
export class TestRedis {
  private child: ChildProcess | undefined;
  readonly dir = tempDir('lazy-mcp-redis-');
  private constructor(readonly port: number) {}

  static async start(): Promise<TestRedis> {
    const redis = new TestRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('/usr/bin/redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
      env: safeEnvironment(),
      stdio: 'ignore',
    });
    this.child = child;
    await until(() => pings(this.port), 10_000, 'redis-server did not answer PING');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child?.pid) return;
    child.kill('SIGKILL');
    const pid = child.pid;
    if (!(await waitFor(() => !isAlive(pid), 5000))) throw new Error('redis-server did not stop');
  }
}

/** One `lazy-mcp serve --http --cluster` process. */
export class TestMember {
  stderr = '';
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  get pid(): number {
    return this.child.pid!;
  }

  static async start(configPath: string, redis: TestRedis, extraArgs: string[] = []): Promise<TestMember> {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [cliPath, 'serve', '--http', '--port', String(port), '--config', configPath, '--cluster', redis.url, '--advertise', `http://127.0.0.1:${port}`, ...extraArgs],
      { cwd: repoRoot, env: { ...safeEnvironment(), LAZY_MCP_CLUSTER_SECRET: SECRET }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const member = new TestMember(child, port);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (member.stderr += chunk));
    await until(async () => member.stderr.includes('listening on') || child.exitCode !== null, 20_000, `member did not listen (${member.stderr})`);
    if (child.exitCode !== null) throw new Error(`member exited ${child.exitCode}: ${member.stderr}`);
    return member;
  }

  /** Ends it: SIGTERM (its servers stop with it) or SIGKILL (they are left to the test to reap). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    await exited;
  }
}

/** A config of one server that notes its pids in `pids`. */
export function notesConfig(): { path: string; pids: string } {
  const dir = tempDir('lazy-mcp-cluster-');
  const pids = join(dir, 'pids');
  mkdirSync(pids, { recursive: true });
  const path = join(dir, 'mcp.json');
  writeFileSync(path, JSON.stringify({ mcpServers: { notes: { command: process.execPath, args: [join(repoRoot, 'test/fixtures/notes-pid.mjs'), pids] } } }));
  return { path, pids };
}


/** One JSON-RPC exchange with a gateway over Streamable HTTP; the answer whether it came as JSON or SSE. */
export async function rpc(
  url: string,
  message: { id?: number; method: string; params?: object },
  headers: Record<string, string> = {},
): Promise<{ status: number; sessionId: string | null; body: { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } | undefined }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
  const text = await response.text();
  let body;
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const parsed = JSON.parse(line.slice(5)) as { id?: unknown };
      if (parsed.id === message.id) body = parsed;
    }
  } else if (text.trim() !== '') body = JSON.parse(text);
  return { status: response.status, sessionId: response.headers.get('mcp-session-id'), body };
}

/** A legacy-era session with a gateway: initialize, then initialized. */
export async function openSession(url: string): Promise<string> {
  const init = await rpc(url, { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cluster-test', version: '1' } } });
  if (!init.sessionId) throw new Error(`no session: ${JSON.stringify(init)}`);
  await rpc(url, { method: 'notifications/initialized' }, { 'mcp-session-id': init.sessionId, 'mcp-protocol-version': '2025-06-18' });
  return init.sessionId;
}

let nextId = 10;
/** Calls a gateway tool in a session; the JSON-RPC answer. */
export function callTool(url: string, sessionId: string, name: string, args: object = {}) {
  return rpc(url, { id: nextId++, method: 'tools/call', params: { name, arguments: args } }, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' });
}
