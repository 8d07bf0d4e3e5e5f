import { resolve } from 'node:path';
import type { ResolvedServer } from '../../manager/config/config.js';
import type { ConnectOptions } from '../../protocol/client.js';
import type { Channel } from '../../transport/channel.js';
import { safeEnvironment } from '../../transport/stdio/child-env.js';
import { attachShared } from './attach.js';
import type { SharedOptions } from './paths.js';
import type { SharedSpec } from './wire.js';

/**
 * The entry as the daemon is to run it: the environment the server would get from this
 * client (the safe host variables, or all of them with `inheritEnv`, then the entry's
 * own), its working folder made absolute, and what this client declares (as
 * `McpClient` would): so that the fingerprint is the same exactly when the process
 * would be.
 */
export function sharedSpec(config: ResolvedServer, options: ConnectOptions): SharedSpec {
  const handlers = options.handlers ?? {};
  const named = options.capabilities ?? {};
  return {
    command: config.command,
    args: [...(config.args ?? [])],
    env: safeEnvironment(config.env, config.inheritEnv ?? false),
    cwd: resolve(config.cwd ?? process.cwd()),
    framing: config.framing ?? 'newline',
    ...(options.roots ? { roots: options.roots } : {}),
    capabilities: {
      elicitation: Boolean(handlers.elicitation || named.elicitation),
      sampling: Boolean(handlers.sampling || named.sampling),
      roots: Boolean(options.roots || handlers.roots || named.roots),
    },
  };
}

/** A slot's channel to its server through the pool daemon (see {@link attachShared}). */
export function openShared(server: string, config: ResolvedServer, options: ConnectOptions, shared: SharedOptions, signal: AbortSignal): Promise<Channel> {
  const timeout = config.timeout ?? options.timeout;
  return attachShared(
    {
      name: server,
      spec: sharedSpec(config, options),
      ...(timeout === undefined ? {} : { timeout }),
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      signal,
    },
    shared,
  );
}
