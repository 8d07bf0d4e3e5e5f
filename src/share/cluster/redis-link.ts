import type { Redis as RedisClient } from 'ioredis';
import { McpError } from '../../errors.js';
import { shownRedis } from './options.js';

export type { RedisClient };

/** Longest wait between reconnection attempts while Redis is away, in ms. */
const MAX_RECONNECT_MS = 1000;

/**
 * A connection to the cluster's Redis. Commands fail at once while it is away (no offline
 * queue: a member must refuse what it cannot place, not hang), and it reconnects by
 * itself, every second at most, for as long as the member lives.
 */
export async function openRedis(url: string, role: string, onProblem: (message: string) => void): Promise<RedisClient> {
  // Loaded here, with the first cluster: a pool without `cluster` never loads it.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (times: number) => Math.min(times * 100, MAX_RECONNECT_MS),
    connectionName: `lazy-mcp ${role}`,
  });
  let lastReported = '';
  // An unhandled 'error' event would end the process; each new kind of failure is told once.
  client.on('error', (error: Error) => {
    if (error.message === lastReported) return;
    lastReported = error.message;
    onProblem(`Redis ${shownRedis(url)} (${role}): ${error.message}`);
  });
  client.on('ready', () => (lastReported = ''));
  await client.connect().catch(() => {
    // Not fatal: the member starts without Redis and works once it answers (see Membership.healthy).
  });
  return client;
}

/** The error of a command refused because Redis is away. */
export function redisDown(url: string, error: unknown): McpError {
  return new McpError('unavailable', `the cluster's Redis at ${shownRedis(url)} is unreachable (${(error as Error)?.message ?? String(error)})`, { cause: error });
}
