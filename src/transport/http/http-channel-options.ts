import type { AuthProvider } from './auth-provider.js';

/** What every HTTP channel is opened with (Streamable HTTP and the legacy SSE transport). */
export interface HttpChannelOptions {
  /** The MCP endpoint (http or https); for SSE, the endpoint the server's `endpoint` event comes from. */
  url: string | URL;
  /** The server's name, for error messages. */
  name?: string;
  /** Sent on every request (the config's `headers`). */
  headers?: Record<string, string>;
  /** Largest JSON body or SSE event accepted, in bytes. Default 64 MiB. */
  maxMessageBytes?: number;
  /** OAuth: the `Authorization` header and what to do on 401 / 403 `insufficient_scope`. */
  auth?: AuthProvider;
  /** Aborting it closes the channel. */
  signal?: AbortSignal;
  /**
   * Replaces the platform's `fetch` (undici), e.g. to give it a dispatcher. Default: the
   * platform's over connections of the channel's own, closed with it.
   */
  fetch?: typeof fetch;
}
