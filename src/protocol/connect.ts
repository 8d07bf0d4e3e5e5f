import { McpError, serverLabel } from '../errors.js';
import type { Channel } from '../transport/channel.js';
import type { ConnectOptions } from './client-options.js';
import { loadSchemas } from './schemas/lazy-schemas.js';
import { remoteChannelConfig, type ServerConfig, type StdioServerConfig } from './server-config.js';

/** What starting needs of the client it makes over the channel. */
export interface Starting {
  /** The negotiation, bounded by the client's timeout. */
  handshake(): Promise<void>;
  stderrTail(): string[];
  /** The start's error with the server's last stderr lines. */
  startFailed(error: McpError, tail: string[]): McpError;
  close(): Promise<void>;
}

/**
 * Spawns the stdio server, or opens the channel to the remote one (`type` `"http"`,
 * `"streamable-http"` or `"sse"`). The transports load with their first use: a host of
 * stdio servers only never pays for HTTP, nor one of remote servers for processes.
 */
export async function openChannel(config: ServerConfig, options: ConnectOptions): Promise<Channel> {
  const remote = remoteChannelConfig(config, options.name);
  if (remote) {
    const { createHttpChannel } = await import('../transport/http/create-http-channel.js');
    return createHttpChannel(remote, { name: options.name ?? remote.url, ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }) });
  }
  const { framing, timeout: _timeout, type: _type, ...spec } = config as StdioServerConfig;
  const { StdioChannel } = await import('../transport/stdio/stdio-channel.js');
  return StdioChannel.open(spec, { name: options.name, framing, maxMessageBytes: options.maxMessageBytes, shutdownGraceMs: options.shutdownGraceMs });
}

/**
 * Makes a client over the channel being opened and runs its handshake. `options.signal`
 * aborts the start only: it rejects at once with `cancelled`, and the teardown it starts
 * is owned by the channel and bounded by its grace. A failed start closes what it opened.
 */
export function start<C extends Starting>(opening: Promise<Channel>, options: ConnectOptions, create: (channel: Channel) => C): Promise<C> {
  const { signal } = options;
  return new Promise<C>((resolve, reject) => {
    let client: C | undefined;
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      reject(connectCancelled(options.name, signal!));
      if (client) void client.close();
      else opening.then((channel) => channel.close(options.shutdownGraceMs), () => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const attempt = (async () => {
      // The schemas load while the server starts; both are needed before its first answer.
      const schemas = loadSchemas();
      schemas.catch(() => undefined); // awaited below; a failed open must not leave it unhandled
      const channel = await opening;
      if (settled) return undefined;
      // Subscribed at once: a server that exits (or writes stderr) while the schemas still load is seen.
      client = create(channel);
      await schemas;
      await client.handshake();
      return client;
    })();
    attempt
      .then(
        (connected) => {
          if (!connected) return;
          if (settled) return void connected.close();
          settled = true;
          resolve(connected);
        },
        async (error: McpError) => {
          if (settled) return;
          const tail = client?.stderrTail() ?? [];
          await client?.close();
          if (settled) return;
          settled = true;
          reject(client ? client.startFailed(error, tail) : error);
        },
      )
      .finally(() => signal?.removeEventListener('abort', onAbort));
  });
}

export function connectCancelled(server: string | undefined, signal: AbortSignal): McpError {
  return new McpError('cancelled', `${serverLabel(server)}connect was cancelled`, { server, phase: 'connect', cause: signal.reason });
}
