import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { ResolvedServer } from '../../manager/config/config.js';
import type { ConnectOptions } from '../../protocol/client.js';

/**
 * The server fingerprint as the cluster places by it: what the entry itself says (command,
 * args, its own env, cwd, framing, whether it inherits the environment) and what members
 * declare to it, never the host's environment, which differs from machine to machine.
 */
export function clusterFingerprint(config: ResolvedServer, options: ConnectOptions): string {
  const handlers = options.handlers ?? {};
  const named = options.capabilities ?? {};
  const canonical = JSON.stringify([
    config.command,
    config.args ?? [],
    Object.entries(config.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    config.cwd === undefined ? null : resolve(config.cwd),
    config.framing ?? 'newline',
    config.inheritEnv ?? false,
    options.roots?.map((r) => [r.uri, r.name ?? null]) ?? null,
    [Boolean(handlers.elicitation || named.elicitation), Boolean(handlers.sampling || named.sampling), Boolean(options.roots || handlers.roots || named.roots)],
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}
