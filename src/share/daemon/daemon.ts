import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { McpError } from '../../errors.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, type JsonRpcMessage } from '../../transport/channel.js';
import { SERVER_ERROR } from '../../transport/mcp-constants.js';
import { DaemonSession } from './daemon-session.js';
import { fingerprint } from './fingerprint.js';
import { DaemonManifests } from './manifests.js';
import { isSecret, writeSecret } from './secret.js';
import { withLock } from './lock.js';
import type { DaemonPaths } from './paths.js';
import { connectSocket } from './probe.js';
import { SharedServer } from './shared-server.js';
import { SocketChannel } from './socket-channel.js';
import { ATTACH_METHOD, type AttachParams, type AttachResult, CONTROL_METHOD, type ControlParams, type DaemonStatus, HELLO_ID, toWire, WIRE_VERSION } from './wire.js';

export interface DaemonOptions {
  paths: DaemonPaths;
  version: string;
  /** With no client for this long, the daemon stops its servers and exits; a server no session uses lingers as long. */
  idleTimeoutMs: number;
  /** One line for the log. */
  log: (line: string) => void;
}

/** How long a new connection has to say who it is. */
const HELLO_TIMEOUT_MS = 10_000;

/**
 * The pool daemon: one per user and version, listening on a socket in the user's private
 * folder. Each attach names a server entry; the daemon keeps one process per fingerprint
 * and serves every attached session of it (see {@link DaemonSession}). With no
 * connection for `idleTimeoutMs` it stops everything; `closed` settles then.
 *
 * Who may attach: only processes that can open the socket, which is 0600 in a 0700
 * folder of the user's own (see `securePrivateFolder`), and that prove they can read the
 * daemon's secret, a 0600 file beside it (see secret.ts: it stands for the peer uid
 * check, which Node cannot make).
 * Sessions never see each other's calls, questions or the servers' environment: status
 * shows fingerprints, never entries.
 */
export class PoolDaemon {
  private readonly servers = new Map<string, SharedServer>();
  private readonly sessions = new Set<DaemonSession>();
  private readonly sockets = new Set<Socket>();
  private idleTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private readonly startedAt = Date.now();
  private readonly manifests: DaemonManifests;
  private ended!: () => void;
  /** Settles once the daemon has stopped (idle, `daemon stop`, or `stop()`). */
  readonly closed = new Promise<void>((resolve) => (this.ended = resolve));

  private constructor(
    private readonly listener: Server,
    private readonly options: DaemonOptions,
    private readonly secret: string,
  ) {
    this.manifests = new DaemonManifests(options.paths.manifests, (line) => options.log(`manifest cache: ${line}`));
    listener.on('connection', (socket) => this.accept(socket));
    this.armIdle();
  }

  /**
   * Binds the socket, unless a live daemon already answers on it: then resolves undefined.
   * A socket file nobody answers on (a daemon that was killed) is removed first. Binding
   * is done under a lock, so two daemons starting at once never both bind.
   */
  static async start(options: DaemonOptions): Promise<PoolDaemon | undefined> {
    const { socket, bindLock } = options.paths;
    return withLock(bindLock, async () => {
      const live = await connectSocket(socket).catch(() => undefined);
      if (live) {
        live.destroy();
        return undefined;
      }
      try {
        unlinkSync(socket);
      } catch {
        // No leftover.
      }
      // Before the socket exists: a client that can connect finds this daemon's secret.
      const secret = writeSecret(options.paths.secret);
      const listener = createServer();
      const previous = process.umask(0o177);
      try {
        await new Promise<void>((resolve, reject) => {
          listener.once('error', reject);
          listener.listen(socket, () => (listener.off('error', reject), resolve()));
        });
      } finally {
        process.umask(previous);
      }
      chmodSync(socket, 0o600);
      return new PoolDaemon(listener, options, secret);
    });
  }

  /** What `daemon status` shows. */
  status(): DaemonStatus {
    const clients = new Map<number, number>();
    for (const session of this.sessions) clients.set(session.clientPid, (clients.get(session.clientPid) ?? 0) + 1);
    return {
      version: this.options.version,
      pid: process.pid,
      uptimeMs: Date.now() - this.startedAt,
      rssBytes: process.memoryUsage().rss,
      socket: this.options.paths.socket,
      idleTimeoutMs: this.options.idleTimeoutMs,
      clients: [...clients].map(([pid, connections]) => ({ pid, connections })),
      servers: [...this.servers.values()].map((s) => ({
        name: s.name,
        fingerprint: s.fingerprint,
        ...(s.pid === undefined ? {} : { pid: s.pid }),
        state: s.state,
        sessions: s.sessionCount,
        ...(s.rssBytes() === undefined ? {} : { rssBytes: s.rssBytes() }),
        startedAt: s.startedAt.toISOString(),
      })),
    };
  }

  /** Stops every server (bounded by their grace), closes every connection and the socket. Idempotent. */
  stop(why = 'stopped'): Promise<void> {
    this.stopping ??= (async () => {
      this.options.log(`stopping: ${why}`);
      clearTimeout(this.idleTimer);
      this.listener.close();
      const reason = new McpError('unavailable', `the pool daemon stopped (${why})`, {});
      await Promise.all([...this.servers.values()].map((s) => s.close(reason, DEFAULT_SHUTDOWN_GRACE_MS)));
      await Promise.all([...this.sessions].map((s) => s.close()));
      await this.manifests.flushed(DEFAULT_SHUTDOWN_GRACE_MS);
      for (const socket of this.sockets) socket.destroy();
      try {
        unlinkSync(this.options.paths.socket);
      } catch {
        // Gone already.
      }
      this.ended();
    })();
    return this.stopping;
  }

  private accept(socket: Socket): void {
    if (this.stopping) return void socket.destroy();
    this.sockets.add(socket);
    clearTimeout(this.idleTimer);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.armIdle();
    });
    const channel = new SocketChannel(socket, { lost: () => new McpError('peer-eof', 'the client closed the connection') });
    const timer = setTimeout(() => void channel.close(), HELLO_TIMEOUT_MS);
    const first = channel.onMessage((message) => {
      first.dispose();
      clearTimeout(timer);
      void this.hello(channel, message as unknown as Record<string, unknown>);
    });
    channel.onClose(() => clearTimeout(timer));
  }

  private async hello(channel: SocketChannel, m: Record<string, unknown>): Promise<void> {
    const reply = (body: { result: unknown } | { error: unknown }) => channel.send({ jsonrpc: '2.0', id: HELLO_ID, ...body } as JsonRpcMessage);
    const refuse = (error: unknown) => reply({ error: { code: SERVER_ERROR, message: (error as Error).message, data: toWire(error) } }).finally(() => channel.close());
    const params = (m.params ?? {}) as Partial<AttachParams & ControlParams>;
    if (m.id !== HELLO_ID || (m.method !== ATTACH_METHOD && m.method !== CONTROL_METHOD)) {
      return void refuse(new McpError('protocol-error', `the pool daemon expected ${ATTACH_METHOD} first, got ${JSON.stringify(m.method ?? m.id)}`, {})).catch(() => undefined);
    }
    if (!isSecret(this.secret, params.secret)) {
      this.options.log(`refused a connection that did not carry this daemon's secret (${String(m.method)})`);
      return void refuse(new McpError('unavailable', `the pool daemon refused the connection: it did not carry the daemon's secret (${this.options.paths.secret}), which only this user can read`, {})).catch(() => undefined);
    }
    if (params.wire !== WIRE_VERSION || params.version !== this.options.version) {
      const message = `version mismatch: this pool daemon is lazy-mcp ${this.options.version} (wire ${WIRE_VERSION}), the client is lazy-mcp ${String(params.version)} (wire ${String(params.wire)})`;
      this.options.log(message);
      return void refuse(new McpError('unavailable', message, {})).catch(() => undefined);
    }
    if (m.method === CONTROL_METHOD) return this.control(channel, params.op, reply);
    const attach = params as AttachParams;
    let server: SharedServer | undefined;
    try {
      checkAttach(attach);
      const fp = fingerprint(attach.spec);
      server = this.servers.get(fp);
      if (!server) {
        server = new SharedServer(fp, attach, this.options.idleTimeoutMs, (gone) => this.servers.get(fp) === gone && this.servers.delete(fp), this.options.log, this.manifests);
        this.servers.set(fp, server);
      }
      await server.attachable();
      if (!channel.isOpen) return server.releaseIfUnused(); // the client gave up waiting
      const session = new DaemonSession(channel, server, attach.pid, (s) => this.sessions.delete(s));
      this.sessions.add(session);
      const result: AttachResult = { version: this.options.version, daemonPid: process.pid, fingerprint: fp, serverPid: server.pid ?? 0, era: server.description().era };
      await reply({ result });
    } catch (error) {
      await refuse(error).catch(() => undefined);
    }
  }

  private async control(channel: SocketChannel, op: unknown, reply: (body: { result: unknown }) => Promise<void>): Promise<void> {
    if (op === 'status') await reply({ result: this.status() }).catch(() => undefined);
    else if (op === 'stop') {
      await reply({ result: { stopping: true } }).catch(() => undefined);
      void this.stop('lazy-mcp daemon stop');
    }
    await channel.close();
  }

  /** With no connection at all, the idle clock runs. */
  private armIdle(): void {
    if (this.sockets.size > 0 || this.stopping) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.stop(`idle for ${this.options.idleTimeoutMs} ms`), this.options.idleTimeoutMs);
  }
}

/** Hostile or broken attach requests are refused naming the field. */
function checkAttach(p: AttachParams): void {
  const fail = (field: string, value: unknown) => {
    throw new McpError('invalid-config', `the attach request's ${field} is invalid: ${JSON.stringify(value)?.slice(0, 200)}`, {});
  };
  if (typeof p.name !== 'string') fail('name', p.name);
  if (!Number.isSafeInteger(p.pid)) fail('pid', p.pid);
  const spec = p.spec;
  if (typeof spec !== 'object' || spec === null) return fail('spec', spec);
  if (typeof spec.command !== 'string' || spec.command === '') fail('spec.command', spec.command);
  if (!Array.isArray(spec.args) || !spec.args.every((a) => typeof a === 'string')) fail('spec.args', spec.args);
  if (typeof spec.env !== 'object' || spec.env === null || !Object.values(spec.env).every((v) => typeof v === 'string')) fail('spec.env', '…');
  if (typeof spec.cwd !== 'string') fail('spec.cwd', spec.cwd);
  if (spec.framing !== 'newline' && spec.framing !== 'content-length') fail('spec.framing', spec.framing);
  if (spec.roots !== undefined && !(Array.isArray(spec.roots) && spec.roots.every((r) => typeof r?.uri === 'string'))) fail('spec.roots', spec.roots);
  const caps = spec.capabilities;
  if (typeof caps !== 'object' || caps === null || !['elicitation', 'sampling', 'roots'].every((k) => typeof (caps as unknown as Record<string, unknown>)[k] === 'boolean')) fail('spec.capabilities', caps);
  const info = spec.clientInfo;
  if (typeof info !== 'object' || info === null || typeof info.name !== 'string' || typeof info.version !== 'string') fail('spec.clientInfo', info);
  if (p.timeout !== undefined && !(typeof p.timeout === 'number' && p.timeout > 0)) fail('timeout', p.timeout);
  if (p.maxMessageBytes !== undefined && !(Number.isSafeInteger(p.maxMessageBytes) && p.maxMessageBytes > 0)) fail('maxMessageBytes', p.maxMessageBytes);
}
