import type { Channel } from '../channel.js';
import type { AuthProvider } from './auth-provider.js';
import { SseLegacyChannel } from './sse-legacy.js';
import { StreamableHttpChannel } from './streamable-http.js';

/**
 * What a remote channel needs of a server entry. The manager's `ResolvedRemoteServer`
 * has this shape; the transport layer does not import the manager's types.
 */
export interface RemoteChannelConfig {
  /** `http`: Streamable HTTP (either era); `sse`: HTTP+SSE of 2024-11-05. */
  transport: 'http' | 'sse';
  url: string;
  /** The URL as messages and `info.url` show it (no secrets); default: `url` without its userinfo. */
  shownUrl?: string;
  headers?: Record<string, string>;
}

export interface RemoteChannelOptions {
  /** The server's name, for error messages. */
  name: string;
  /** Largest body or SSE event accepted, in bytes. Default 64 MiB. */
  maxMessageBytes?: number;
  /** OAuth for this server, when it has any. */
  auth?: AuthProvider;
  /** Aborting it closes the channel. */
  signal?: AbortSignal;
}

/**
 * The channel for a remote server entry. Nothing is sent until the first `send`, except
 * that an `sse` channel opens its stream at once (that transport has no other way in).
 */
export function createHttpChannel(config: RemoteChannelConfig, options: RemoteChannelOptions): Channel {
  const common = {
    url: config.url,
    ...(config.shownUrl === undefined ? {} : { shownUrl: config.shownUrl }),
    name: options.name,
    ...(config.headers === undefined ? {} : { headers: config.headers }),
    ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  return config.transport === 'sse' ? new SseLegacyChannel(common) : new StreamableHttpChannel(common);
}
