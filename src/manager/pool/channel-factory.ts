import type { ConnectOptions } from '../../protocol/client.js';
import type { Channel } from '../../transport/channel.js';
import type { OAuthProvider } from '../../transport/http/oauth/provider-types.js';
import type { ServerEntry } from '../config/config.js';

/** An entry a slot can start: a stdio server (sandboxed or not) or a remote one. */
export type RunnableEntry = Extract<ServerEntry, { kind: 'stdio' | 'http' }>;

/** What opening one channel is given besides the entry. */
export interface OpenContext {
  /** The options the slot connects with (name, sizes, grace, time-out, the host's capabilities). */
  readonly options: ConnectOptions;
  /** The OAuth provider of a remote entry with `oauth`. */
  readonly auth?: OAuthProvider;
  /** A shutdown during the start: the opening ends, and closes what it made. */
  readonly signal: AbortSignal;
}

/**
 * Opens the channel of one start of a server. The slot asks its factory and never builds a
 * channel itself, so where a server runs (a local child, a sandbox, a remote endpoint, the
 * pool daemon, a test's in-memory pair) is decided here, below the slot's state machine.
 */
export interface ChannelFactory {
  open(entry: RunnableEntry, context: OpenContext): Promise<Channel>;
}

/**
 * Channels made in this process: stdio children (in their sandbox when the entry has one)
 * and Streamable HTTP / HTTP+SSE endpoints. Each transport loads with its first start: a
 * pool answering from its cache, or of stdio servers only, never loads the others.
 */
export const localChannels: ChannelFactory = {
  async open(entry, { options, auth, signal }) {
    const { maxMessageBytes, shutdownGraceMs } = options;
    if (entry.kind === 'http') {
      const { transport, url, shownUrl, headers } = entry.config;
      const { createHttpChannel } = await import('../../transport/http/create-http-channel.js');
      // The per-request time-out is the client's; the headers were expanded by the config.
      return createHttpChannel(
        { transport, url, shownUrl, headers },
        { name: entry.name, signal, ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }), ...(auth === undefined ? {} : { auth }) },
      );
    }
    const { framing, timeout: _timeout, ...spec } = entry.config;
    const { StdioChannel } = await import('../../transport/stdio/stdio-channel.js');
    return StdioChannel.open(spec, { name: entry.name, framing, maxMessageBytes, shutdownGraceMs });
  },
};
