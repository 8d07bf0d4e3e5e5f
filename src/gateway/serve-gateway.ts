import type { Readable, Writable } from 'node:stream';
import type { McpError } from '../errors.js';
import type { McpServerManager } from '../manager/manager.js';
import type { Gateway, GatewayOptions } from './gateway-server.js';
import type { HttpListenerOptions } from './http-listener.js';

export interface ServeGatewayOptions extends GatewayOptions {
  /** `"stdio"` (default): one client on `input`/`output`; `"http"`: Streamable HTTP on `host`:`port`. */
  transport?: 'stdio' | 'http';
  /** stdio: where client messages come from. Default `process.stdin`. */
  input?: Readable;
  /** stdio: where answers go. Default `process.stdout`. */
  output?: Writable;
  /** http: see {@link HttpListenerOptions}. */
  http?: HttpListenerOptions;
}

/** A gateway being served. */
export interface ServedGateway {
  readonly gateway: Gateway;
  /** http: the endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url?: string;
  /**
   * Resolves when serving is over: the stdio client closed our stdin, or `close()` was
   * called. It resolves with the error when the stdio client broke the protocol (a message
   * over the size limit), which ended the conversation; else with undefined.
   */
  readonly done: Promise<McpError | undefined>;
  /** Stops serving: closes every client connection (and the HTTP listener). The manager stays the caller's. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves the pool as one MCP server, to clients of either era. On stdio the one client's
 * EOF ends it (`done`); the caller then shuts the manager down, which stops every backend.
 */
export async function serveGateway(manager: McpServerManager, options: ServeGatewayOptions = {}): Promise<ServedGateway> {
  // Loaded here, not with the package: only a process that serves needs the gateway.
  const { Gateway } = await import('./gateway-server.js');
  const gateway = new Gateway(manager, options);
  let closing: Promise<void> | undefined;
  if (options.transport === 'http') {
    const { listenHttp } = await import('./http-listener.js');
    const listener = await listenHttp(gateway, options.http);
    const close = () => (closing ??= Promise.all([listener.close(), gateway.close()]).then(() => undefined));
    return { gateway, url: listener.url, done: listener.closed.then(() => undefined), close };
  }
  const { StdioServerChannel } = await import('../transport/server/stdio-server-channel.js');
  const channel = new StdioServerChannel(options.input ?? process.stdin, options.output ?? process.stdout);
  const done = new Promise<McpError | undefined>((resolve) => channel.onClose((reason) => resolve(reason.code === 'protocol-error' ? reason : undefined)));
  gateway.connect(channel);
  const close = () => (closing ??= gateway.close().then(() => done).then(() => undefined));
  return { gateway, done, close };
}
