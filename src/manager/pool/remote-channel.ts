import type { Channel } from '../../transport/channel.js';
import type { AuthProvider } from '../../transport/http/auth-provider.js';
import type { ResolvedRemoteServer } from '../config/config.js';

/**
 * The channel of a remote entry. Its headers were expanded by the config already; the
 * per-request time-out is the client's (the slot passes the entry's `timeout` to it).
 * Aborting `signal` (a shutdown during the start) closes the channel. The HTTP transports
 * are loaded with the first remote start: a pool of stdio servers never loads them.
 */
export async function openRemoteChannel(
  config: ResolvedRemoteServer,
  options: { name: string; maxMessageBytes?: number; auth?: AuthProvider; signal: AbortSignal },
): Promise<Channel> {
  const { createHttpChannel } = await import('../../transport/http/create-http-channel.js');
  return createHttpChannel(
    { transport: config.transport, url: config.url, shownUrl: config.shownUrl, headers: config.headers },
    {
      name: options.name,
      signal: options.signal,
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.auth === undefined ? {} : { auth: options.auth }),
    },
  );
}
