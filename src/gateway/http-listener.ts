import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { McpError } from '../errors.js';
import { ALL_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSION } from '../protocol/types.js';
import { PROTOCOL_VERSION_META_KEY } from '../protocol/eras/modern.js';
import type { JsonRpcMessage } from '../transport/channel.js';
import { INVALID_REQUEST, PARSE_ERROR, SERVER_ERROR, SESSION_NOT_FOUND } from '../transport/mcp-constants.js';
import { bearerMatcher } from './bearer-token.js';
import type { Gateway } from './gateway-server.js';
import { HttpServerChannel } from '../transport/server/http-server-channel.js';
import type { Identity, JwtAuthOptions } from '../share/principals/jwt-front.js';
import { readRequestBody } from '../transport/server/request-body.js';
import { mustBe } from '../util/check.js';
import { isLoopbackHost } from './loopback-host.js';

export interface HttpListenerOptions {
  /** Address to bind. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** URL path of the endpoint. Default `/mcp`. */
  path?: string;
  /**
   * Values of the `Host` header accepted (DNS rebinding defence), as `name` or `name:port`.
   * Default: the loopback names (`127.0.0.1`, `localhost`, `[::1]`) when bound to loopback,
   * else any.
   */
  allowedHosts?: string[];
  /** Origins accepted besides the loopback ones (`http://localhost:*` and the like). A request without `Origin` is accepted. */
  allowedOrigins?: string[];
  /**
   * When set, every request must carry `Authorization: Bearer <token>`. Required to bind
   * beyond loopback: without it, anyone who can reach the port could call every tool.
   */
  token?: string;
  /**
   * OAuth 2.1 resource server: every request must carry a bearer JWT of `issuer` for
   * `audience`, checked against the issuer's JWKS; its `sub` is the caller's principal.
   * RFC 9728 metadata is served at `/.well-known/oauth-protected-resource<path>`. Replaces `token`.
   */
  auth?: JwtAuthOptions;
  /** Largest request body, in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /**
   * A legacy session with no request in flight, no GET stream and no request for this long
   * is ended (a client that went away without DELETE), in ms. Default 5 minutes.
   */
  sessionIdleMs?: number;
  /** Legacy sessions open at once, all clients together; an `initialize` beyond it gets 503. Default 128. */
  maxSessions?: number;
  /** Legacy sessions open at once from one client address; an `initialize` beyond it gets 429. Default 32. */
  maxSessionsPerClient?: number;
  /** A cluster member's hooks (`cluster` manager option): its internal endpoint, and sealed session ids any member can route. */
  cluster?: ListenerCluster;
}

/** What the listener asks of a cluster member (see `ClusterMember`). */
export interface ListenerCluster {
  /** Serves the members' internal endpoint (its own authentication); false when the request is not for it. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** A new legacy session id, sealed so that any member routes the session's requests here. */
  newSessionId(): string;
  /** A session id or round state not held here: forwarded to the member that holds it, or refused; false: this member issued it. */
  elsewhere(kind: 'session' | 'round', value: string, req: IncomingMessage, res: ServerResponse, body?: string): Promise<boolean>;
}

/** The listening endpoint. */
export interface HttpListener {
  readonly url: string;
  /** Resolves once the listener is closed. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;
const DEFAULT_MAX_SESSIONS = 128;
const DEFAULT_MAX_SESSIONS_PER_CLIENT = 32;
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];
const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/**
 * Streamable HTTP for the gateway, both eras on one endpoint: a POST of `initialize` opens a
 * legacy session (`Mcp-Session-Id`; GET for its stream, DELETE to end it); a POST carrying
 * the 2026-07-28 envelope is served alone, statelessly, so any replica behind a load
 * balancer can answer it. Host, Origin and the optional bearer token are checked first.
 */
export async function listenHttp(gateway: Gateway, options: HttpListenerOptions = {}): Promise<HttpListener> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const loopback = isLoopbackHost(host);
  if (options.auth && options.token !== undefined) throw new McpError('invalid-config', 'give the gateway a token or JWT auth, not both');
  // Loaded only when configured: jose and the verifier are for gateways that use them.
  const front = options.auth ? await import('../share/principals/jwt-front.js') : undefined;
  const jwt = front && options.auth ? await front.JwtVerifier.create(options.auth) : undefined;
  const metadataPath = `/.well-known/oauth-protected-resource${path}`;
  /** Which principal each legacy session was opened by: its later requests must come from the same one. */
  const owners = new Map<string, string>();
  if (!loopback && !jwt && (options.token === undefined || options.token === '')) {
    throw new McpError(
      'invalid-config',
      `refusing to listen on ${host} without a token: beyond loopback anyone who can reach the port could call every tool; give a token (--token-file FILE or LAZY_MCP_TOKEN) or listen on 127.0.0.1`,
    );
  }
  const cluster = options.cluster;
  const sessions = new Map<string, HttpServerChannel>();
  const lastSeen = new Map<string, number>();
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxPerClient = options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT;
  for (const [field, value] of [['maxSessions', maxSessions], ['maxSessionsPerClient', maxPerClient], ['sessionIdleMs', idleMs]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(mustBe(field, 'a positive whole number', value));
  }
  /** Sessions open per client address. */
  const perClient = new Map<string, number>();
  const sockets = new Set<Socket>();
  let url = '';

  const allowedHost = (value: string | undefined): boolean => {
    if (value === undefined) return false;
    const allowed = options.allowedHosts ?? (loopback ? [...LOOPBACK_HOSTS, host] : undefined);
    if (!allowed) return true;
    // A rebinding attacker's page sends its own name: the name decides, whatever the port.
    return allowed.includes(value) || allowed.includes(value.replace(/:\d+$/, ''));
  };
  const allowedOrigin = (value: string | undefined): boolean =>
    value === undefined || LOOPBACK_ORIGIN.test(value) || (options.allowedOrigins ?? []).includes(value);
  const matches = options.token === undefined ? undefined : bearerMatcher(options.token);
  const authorized = (value: string | undefined): boolean => matches === undefined || matches(value);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!allowedHost(req.headers.host)) return refuse(res, 403, `Host ${JSON.stringify(req.headers.host ?? '')} is not allowed`);
    if (!allowedOrigin(req.headers.origin)) return refuse(res, 403, `Origin ${JSON.stringify(req.headers.origin)} is not allowed`);
    if (cluster && (await cluster.handle(req, res))) return;
    let identity: Identity | undefined;
    if (jwt) {
      const where = (req.url ?? '').split('?')[0];
      if (where === metadataPath || where === '/.well-known/oauth-protected-resource') {
        if (req.method !== 'GET') return refuse(res, 405, 'the metadata is read with GET');
        return void res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(JSON.stringify(jwt.metadata(url)));
      }
      try {
        identity = await jwt.verify(req.headers.authorization);
      } catch (error) {
        if (!front || !(error instanceof front.BearerRefusal)) throw error;
        if (error.status === 401) res.setHeader('www-authenticate', front.challenge(new URL(metadataPath, url).href, error));
        else res.setHeader('retry-after', '5');
        return refuse(res, error.status, error.message);
      }
    } else if (!authorized(req.headers.authorization)) {
      res.setHeader('www-authenticate', 'Bearer');
      return refuse(res, 401, 'a bearer token is required');
    }
    if ((req.url ?? '').split('?')[0] !== path) return refuse(res, 404, `not found; the MCP endpoint is ${path}`);
    const sessionId = header(req, 'mcp-session-id');
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (sessionId !== undefined && !session) {
      if (cluster && (await cluster.elsewhere('session', sessionId, req, res))) return;
      return refuse(res, 404, 'Session not found', SESSION_NOT_FOUND);
    }
    // A session is its opener's: another principal's token never reaches it (nor learns whether it exists).
    if (identity && session && owners.get(sessionId!) !== identity.principal.id) return refuse(res, 404, 'Session not found', SESSION_NOT_FOUND);
    if (session) lastSeen.set(sessionId!, Date.now());
    const version = header(req, 'mcp-protocol-version');
    if (version !== undefined && !(ALL_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      return refuse(res, 400, `Unsupported MCP-Protocol-Version ${JSON.stringify(version)}`);
    }
    if (req.method === 'GET') {
      if (!session) return refuse(res, 405, 'GET needs an Mcp-Session-Id (legacy sessions only)');
      return session.attachStandalone(res);
    }
    if (req.method === 'DELETE') {
      if (!session) return refuse(res, 400, 'DELETE needs an Mcp-Session-Id');
      sessions.delete(sessionId!);
      await session.close();
      return void res.writeHead(204).end();
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'GET, POST, DELETE');
      return refuse(res, 405, `method ${req.method} is not allowed`);
    }
    const body = await readRequestBody(req, maxBody);
    if (body === undefined) return refuse(res, 413, `the request body is over ${maxBody} bytes`);
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(body) as JsonRpcMessage;
    } catch {
      return refuse(res, 400, 'Parse error: the body is not JSON', PARSE_ERROR);
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return refuse(res, 400, 'the body must be one JSON-RPC message (batches are not accepted)', INVALID_REQUEST);
    const invalid = invalidMessage(message as unknown as Record<string, unknown>);
    if (invalid !== undefined) return refuse(res, 400, `Invalid Request: ${invalid}`, INVALID_REQUEST, validId((message as { id?: unknown }).id));
    const sse = (req.headers.accept ?? '').includes('text/event-stream');
    const m = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
    if (session) return session.accept(message, res, sse);
    if (m.method === 'initialize') {
      const client = req.socket.remoteAddress ?? '';
      const refusal = sessionRefusal(client);
      if (refusal) {
        res.setHeader('retry-after', String(Math.ceil(idleMs / 1000)));
        return refuse(res, refusal.status, refusal.message, SERVER_ERROR, validId((message as { id?: unknown }).id));
      }
      const id = cluster?.newSessionId() ?? randomUUID();
      const channel = new HttpServerChannel(url, id, false);
      sessions.set(id, channel);
      lastSeen.set(id, Date.now());
      perClient.set(client, (perClient.get(client) ?? 0) + 1);
      if (identity) owners.set(id, identity.principal.id);
      channel.onClose(() => {
        sessions.delete(id);
        lastSeen.delete(id);
        owners.delete(id);
        const left = (perClient.get(client) ?? 1) - 1;
        if (left > 0) perClient.set(client, left);
        else perClient.delete(client);
      });
      gateway.connect(channel, identity);
      res.setHeader('mcp-session-id', id);
      return channel.accept(message, res, sse);
    }
    const modern = version === MODERN_PROTOCOL_VERSION || m.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined;
    if (!modern) return refuse(res, 400, 'Bad Request: no Mcp-Session-Id; send initialize first, or use protocol revision 2026-07-28', SERVER_ERROR);
    // A round another member issued goes back to it: the call waiting on its answers lives there.
    const state = (m.params as { requestState?: unknown } | undefined)?.requestState;
    if (cluster && typeof state === 'string' && (await cluster.elsewhere('round', state, req, res, body))) return;
    // Stateless: a connection (and pool session) for this one request, ended once it is answered.
    const channel = new HttpServerChannel(url, undefined, true);
    channel.onAnswered(() => {
      if (channel.openRequests === 0) void channel.close();
    });
    gateway.connect(channel, identity);
    channel.accept(message, res, sse);
    if (channel.openRequests === 0) void channel.close();
  };

  /** Ends the sessions idle past the timeout (a client gone without DELETE); returns how many. */
  const sweepIdle = (): number => {
    const now = Date.now();
    let ended = 0;
    for (const [id, channel] of sessions) {
      if (now - (lastSeen.get(id) ?? now) > idleMs && !channel.busy) {
        void channel.close();
        ended++;
      }
    }
    return ended;
  };
  /** Why a new session may not open now (the caps), or undefined. */
  const sessionRefusal = (client: string): { status: number; message: string } | undefined => {
    if (sessions.size >= maxSessions || (perClient.get(client) ?? 0) >= maxPerClient) sweepIdle();
    if ((perClient.get(client) ?? 0) >= maxPerClient) {
      return { status: 429, message: `this client has ${maxPerClient} sessions open, the most one client may (maxSessionsPerClient); end one with DELETE or retry later` };
    }
    if (sessions.size >= maxSessions) {
      return { status: 503, message: `the gateway has ${maxSessions} sessions open, the most it serves at once (maxSessions); retry later` };
    }
    return undefined;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, error instanceof Error ? error.message : String(error));
      else res.end();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new McpError('connect-failed', `cannot listen on ${host}:${options.port ?? 0}: ${error.message}`, { cause: error })),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;

  const sweep = setInterval(sweepIdle, Math.min(idleMs, 60_000));
  sweep.unref();

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.close()));
      sessions.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await done;
      resolveClosed();
    })());
  return { url, closed, close };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** An HTTP error with a JSON-RPC error body, as the SDK's clients expect. */
function refuse(res: ServerResponse, status: number, message: string, code = SERVER_ERROR, id: string | number | null = null): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
}

/**
 * Why a POSTed object is not a JSON-RPC request, notification or response, or undefined if
 * it is one. Such a message would be acknowledged (202) and never answered.
 */
function invalidMessage(m: Record<string, unknown>): string | undefined {
  if ('method' in m) {
    if (typeof m.method !== 'string') return `"method" must be a string, got ${shown(m.method)}`;
    if (m.id !== undefined && validId(m.id) === null) return `"id" must be a string or a number, got ${shown(m.id)}`;
    if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null)) return `"params" must be an object or an array, got ${shown(m.params)}`;
    return undefined;
  }
  if (!('result' in m) && !('error' in m)) return 'the message has no "method", "result" or "error"';
  if (validId(m.id) === null && m.id !== null) return `"id" must be a string or a number, got ${shown(m.id)}`;
  return undefined;
}

function validId(id: unknown): string | number | null {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function shown(value: unknown): string {
  return value === undefined ? 'nothing' : `${JSON.stringify(value)?.slice(0, 60)} (${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value})`;
}

