import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpError } from '../../errors.js';
import { HttpServerChannel } from '../../transport/server/http-server-channel.js';
import type { Channel, JsonRpcMessage } from '../../transport/channel.js';
import { PARSE_ERROR, SERVER_ERROR, SESSION_NOT_FOUND } from '../../transport/mcp-constants.js';
import { createMemoryChannelPair } from '../../transport/memory.js';
import { DaemonSession } from '../daemon/daemon-session.js';
import { SharedServer } from '../daemon/shared-server.js';
import type { AttachParams } from '../daemon/wire.js';
import { CountedChannel } from './relay-channels.js';
import { readRequestBody } from '../../transport/server/request-body.js';
import { CREDENTIALS_HEADER, type InstanceRef } from './instance-ref.js';

/** Where the internal endpoint of each server lives on a member: `<advertise>/.lazy-mcp/cluster/s/<fingerprint>`. */
export const INTERNAL_PREFIX = '/.lazy-mcp/cluster/';

/** How long an owner that lost a server waits for the calls in flight on it before it stops it, in ms. */
export const DRAIN_MS = 10_000;
/** A server with no member attached stops after this, in ms. */
const LINGER_MS = 60_000;
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** What the host asks of its member. */
export interface OwnerHooks {
  /** The server of this member's config with this fingerprint, as it would run it (for `instance`, filled with its credentials); undefined if none. */
  attachParams(fingerprint: string, instance?: InstanceRef): AttachParams | undefined;
  /** The instance a member's sealed credentials header names; undefined when forged or expired. */
  openInstance(sealed: string): InstanceRef | undefined;
  /** Whether this member owns the fingerprint now (false too while the view cannot be trusted). */
  owns(fingerprint: string, principal?: string): boolean;
  log(line: string): void;
}

interface Attached {
  channel: CountedChannel;
  session: DaemonSession;
}

/**
 * The servers this member owns: each one process (the daemon's {@link SharedServer}),
 * attached to by this member's own slot over an in-memory pair and by every other member
 * over MCP Streamable HTTP on the internal endpoint, authenticated with the cluster secret.
 */
export class OwnerHost {
  /** By fingerprint, or for an instance by fingerprint and a digest of its principal and credentials (see {@link runKey}). */
  private readonly servers = new Map<string, SharedServer>();
  /** What each server is placed by, for a rebalance. */
  private readonly placed = new WeakMap<SharedServer, { fingerprint: string; principal: string }>();
  private readonly attached = new Map<SharedServer, Set<Attached>>();
  /** Internal HTTP sessions, by their id. */
  private readonly httpSessions = new Map<string, HttpServerChannel>();
  private readonly draining = new Set<SharedServer>();
  private closed = false;

  constructor(
    private readonly auth: string,
    private readonly hooks: OwnerHooks,
  ) {}

  /** Fingerprints of the servers running here. */
  running(): string[] {
    return [...this.servers.keys()];
  }

  /** This member's own slot's channel to a server it owns. */
  async attachLocal(fingerprint: string, params: AttachParams, instance?: InstanceRef): Promise<Channel> {
    const server = this.serverFor(fingerprint, params, instance);
    const client = await server.ready();
    const [ours, theirs] = createMemoryChannelPair();
    this.attach(server, client, theirs);
    return ours;
  }

  /** Serves a request under {@link INTERNAL_PREFIX}; false when the path is not ours. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = (req.url ?? '').split('?')[0];
    if (!path.startsWith(INTERNAL_PREFIX)) return false;
    if (!this.authorized(req.headers.authorization)) {
      refuse(res, 401, 'the cluster endpoint needs the cluster secret (members only)');
      return true;
    }
    const match = /^s\/([0-9a-f]{16,64})$/.exec(path.slice(INTERNAL_PREFIX.length));
    if (!match) {
      refuse(res, 404, `no such cluster endpoint ${JSON.stringify(path)}`);
      return true;
    }
    await this.serve(match[1], req, res);
    return true;
  }

  private async serve(fingerprint: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = header(req, 'mcp-session-id');
    const channel = sessionId === undefined ? undefined : this.httpSessions.get(sessionId);
    if (sessionId !== undefined && !channel) return refuse(res, 404, 'Session not found', SESSION_NOT_FOUND);
    if (req.method === 'GET') return channel ? channel.attachStandalone(res) : refuse(res, 405, 'GET needs an Mcp-Session-Id');
    if (req.method === 'DELETE') {
      await channel?.close();
      return void res.writeHead(204).end();
    }
    if (req.method !== 'POST') return refuse(res, 405, `method ${req.method} is not allowed`);
    const body = await readRequestBody(req, MAX_BODY_BYTES);
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(body ?? '') as JsonRpcMessage;
    } catch {
      return refuse(res, 400, 'Parse error: the body is not one JSON-RPC message', PARSE_ERROR);
    }
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    if (channel) return channel.accept(message, res, sse);
    if ((message as { method?: unknown }).method !== 'initialize') return refuse(res, 400, 'Bad Request: no Mcp-Session-Id; send initialize first');
    const principal = decodeURIComponent(header(req, 'x-lazy-mcp-principal') ?? '');
    const sealed = header(req, CREDENTIALS_HEADER);
    const instance = sealed === undefined ? undefined : this.hooks.openInstance(sealed);
    if (sealed !== undefined && (instance === undefined || instance.principal !== principal)) {
      return refuse(res, 400, `the instance credentials (${CREDENTIALS_HEADER}) are forged, expired or for another principal: refused`);
    }
    const params = this.hooks.attachParams(fingerprint, instance);
    if (!params) return refuse(res, 404, `this member's config has no ${instance ? 'per-principal ' : ''}server with fingerprint ${fingerprint}: the members' configs differ`);
    if (!this.hooks.owns(fingerprint, principal) && !this.servers.has(runKey(fingerprint, instance))) {
      return refuse(res, 421, `this member does not own server "${params.name}" (${fingerprint}) in its view of the cluster; place it again`);
    }
    let client;
    const server = this.serverFor(fingerprint, params, instance);
    try {
      client = await server.ready();
    } catch (error) {
      return refuse(res, 502, `server "${params.name}" did not start on its owner: ${(error as Error).message}`);
    }
    const id = randomUUID();
    const http = new HttpServerChannel(`${INTERNAL_PREFIX}s/${fingerprint}`, id, false);
    this.httpSessions.set(id, http);
    http.onClose(() => this.httpSessions.delete(id));
    this.attach(server, client, http);
    res.setHeader('mcp-session-id', id);
    http.accept(message, res, sse);
  }

  private attach(server: SharedServer, client: Awaited<ReturnType<SharedServer['ready']>>, channel: Channel & { relate?(id: number | string, to: number | string): void }): void {
    const counted = new CountedChannel(channel);
    let set = this.attached.get(server);
    if (!set) this.attached.set(server, (set = new Set()));
    const entry: Attached = { channel: counted, session: undefined as unknown as DaemonSession };
    entry.session = new DaemonSession(counted, server, 0, () => set.delete(entry));
    set.add(entry);
  }

  private serverFor(fingerprint: string, params: AttachParams, instance?: InstanceRef): SharedServer {
    if (this.closed) throw new McpError('closed', `server "${params.name}": this cluster member is shutting down`, { server: params.name });
    const key = runKey(fingerprint, instance);
    let server = this.servers.get(key);
    if (!server) {
      server = new SharedServer(
        key,
        params,
        LINGER_MS,
        (gone) => {
          if (this.servers.get(key) === gone) this.servers.delete(key);
          this.attached.delete(gone);
        },
        this.hooks.log,
      );
      this.servers.set(key, server);
      this.placed.set(server, { fingerprint, principal: instance?.principal ?? '' });
    }
    return server;
  }

  /**
   * The view changed: each server this member no longer owns drains (the calls in flight on
   * it end, within DRAIN_MS) and stops; its members re-place it at their next use.
   */
  rebalance(): void {
    for (const server of this.servers.values()) {
      const { fingerprint, principal } = this.placed.get(server)!;
      if (this.hooks.owns(fingerprint, principal) || this.draining.has(server)) continue;
      this.draining.add(server);
      void this.drain(server).finally(() => this.draining.delete(server));
    }
  }

  private async drain(server: SharedServer): Promise<void> {
    const sessions = [...(this.attached.get(server) ?? [])];
    await Promise.all(sessions.map((s) => s.channel.idle(DRAIN_MS)));
    this.hooks.log(`${server.name} (${server.fingerprint}) moved to another member: stopped after its calls in flight`);
    await server.close(new McpError('unavailable', `server "${server.name}" moved to another cluster member; place it again`, { server: server.name }));
  }

  /** Stops every server and ends every session. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.httpSessions.values()].map((c) => c.close()));
    await Promise.all([...this.servers.values()].map((s) => s.close(new McpError('unavailable', `server "${s.name}": its cluster member is shutting down`, { server: s.name }))));
  }

  private authorized(value: string | undefined): boolean {
    return bearerIs(value, this.auth);
  }
}

/**
 * What a running server is kept under: its fingerprint, and for an instance a digest of its
 * principal and credentials (one process per principal and credentials; neither shown in logs).
 */
export function runKey(fingerprint: string, instance?: InstanceRef): string {
  if (!instance) return fingerprint;
  const digest = createHash('sha256').update(JSON.stringify([instance.principal, Object.entries(instance.values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))])).digest('hex').slice(0, 16);
  return `${fingerprint}-${digest}`;
}

/** Whether an Authorization header carries exactly this bearer token (compared in constant time). */
export function bearerIs(value: string | undefined, token: string): boolean {
  const given = Buffer.from(value ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function refuse(res: ServerResponse, status: number, message: string, code = SERVER_ERROR): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

