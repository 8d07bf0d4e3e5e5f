import { hkdfSync } from 'node:crypto';
import { McpError } from '../../errors.js';
import { mustBe } from '../../util/check.js';

/** The `cluster` manager option: one pool across every member that names the same Redis. */
export interface ClusterOptions {
  /** The Redis (or Valkey) URL the members share: `redis://[user:pass@]host:port[/db]` or `rediss://…`. */
  redis: string;
  /** How the other members reach this one: its base URL (`http://host:port`), where `/.lazy-mcp/cluster/…` is served. */
  advertise: string;
  /**
   * The members' shared secret (at least 32 characters): it authenticates members to each
   * other, seals session ids and round states, and (through a derived key) encrypts the
   * OAuth tokens kept in Redis. Default: `LAZY_MCP_CLUSTER_SECRET` from the environment.
   */
  secret?: string;
  /**
   * Serve the internal endpoint on `advertise`'s host and port from the manager itself.
   * `lazy-mcp serve --http` sets it false: its gateway serves the endpoint on its own port.
   * Default true.
   */
  listen?: boolean;
}

/** The keys one secret yields, each for one purpose, so that no two uses share a key. */
export interface ClusterKeys {
  /** Bearer token members send each other. */
  auth: string;
  /** Seals session ids and round states. */
  seal: Buffer;
  /** Encrypts what is kept in Redis (OAuth tokens). */
  store: Buffer;
}

export interface ResolvedCluster {
  redis: string;
  /** `advertise` without a trailing slash. */
  advertise: string;
  listen: boolean;
  keys: ClusterKeys;
  /** Redis key prefix: members of one cluster share it. */
  prefix: string;
}

const MIN_SECRET = 32;

/** Checks the option, naming the field and the value (never the secret's). */
export function resolveCluster(options: ClusterOptions, env: Record<string, string | undefined> = process.env): ResolvedCluster {
  const wrong = (field: string, expected: string, value: unknown) =>
    new McpError('invalid-config', `manager option ${mustBe(`cluster.${field}`, expected, value)}`, { phase: 'config' });
  if (typeof options !== 'object' || options === null) throw new McpError('invalid-config', `manager option ${mustBe('cluster', '{ redis, advertise, secret? }', options)}`, { phase: 'config' });
  if (typeof options.redis !== 'string' || !/^rediss?:\/\//.test(options.redis)) throw wrong('redis', 'a redis:// or rediss:// URL', shownRedis(options.redis));
  let advertise: URL;
  try {
    advertise = new URL(String(options.advertise));
  } catch {
    throw wrong('advertise', 'an http(s) URL other members can reach, such as http://10.0.0.5:8808', options.advertise);
  }
  if (advertise.protocol !== 'http:' && advertise.protocol !== 'https:') throw wrong('advertise', 'an http(s) URL', options.advertise);
  const secret = options.secret ?? env.LAZY_MCP_CLUSTER_SECRET;
  if (typeof secret !== 'string' || secret.length < MIN_SECRET) {
    throw new McpError(
      'invalid-config',
      `manager option cluster.secret (or LAZY_MCP_CLUSTER_SECRET) must be a string of at least ${MIN_SECRET} characters shared by every member, got ${secret === undefined ? 'nothing' : `${typeof secret === 'string' ? secret.length : typeof secret} characters`}`,
      { phase: 'config' },
    );
  }
  if (options.listen !== undefined && typeof options.listen !== 'boolean') throw wrong('listen', 'true or false', options.listen);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', secret, 'lazy-mcp cluster', purpose, 32));
  return {
    redis: options.redis,
    advertise: advertise.href.replace(/\/+$/, ''),
    listen: options.listen ?? true,
    keys: { auth: derive('member auth').toString('base64url'), seal: derive('seal'), store: derive('store') },
    // Members of different clusters may share one Redis: the secret keeps them apart.
    prefix: `lazy-mcp:${derive('prefix').toString('hex').slice(0, 12)}:`,
  };
}

/** A Redis URL as messages show it: without its password. */
export function shownRedis(url: unknown): string {
  if (typeof url !== 'string') return String(url);
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}
