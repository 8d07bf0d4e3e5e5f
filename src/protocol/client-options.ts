import type { McpError } from '../errors.js';
import type { ExitStatus } from '../transport/channel.js';
import type { RequestFinish } from './engine/pending-requests.js';
import type {
  CallOptions,
  ElicitRequest,
  ElicitResult,
  HostHandlers,
  Implementation,
  LogMessage,
  ProtocolEra,
  ProtocolRevision,
  Root,
  ServerCapabilities,
} from './types.js';

// The options and events of an McpClient, and what its parts share.

/** Listeners for a client's events; given to `connect` so none of the early ones is missed. */
export interface McpClientEvents {
  /** One line the server wrote to stderr. */
  stderr: (line: string) => void;
  /** A `notifications/message` from the server. */
  log: (message: LogMessage) => void;
  /** A line on stdout that is not a JSON-RPC message (a stray `console.log`); it was skipped. */
  noise: (line: string) => void;
  toolsChanged: () => void;
  resourcesChanged: () => void;
  promptsChanged: () => void;
  /** `notifications/resources/updated` for a subscribed resource. */
  resourceUpdated: (uri: string) => void;
  /** The session ended; `reason` is `closed` after `close()`, else why the server went away. */
  close: (reason: McpError) => void;
  /** The server process exited; `reason` is why the session ended (`closed` when we closed it). */
  exit: (status: ExitStatus, reason: McpError | undefined) => void;
  /**
   * A legacy-era question no request claims, with requests of several callers in flight:
   * it cannot be tied to one, so the client's own handlers answer it (or it is declined).
   */
  unrouted: (method: string, callers: object[]) => void;
}

export interface ConnectOptions {
  /** Labels errors and messages: `server "fs": …`; also `HostRequestContext.server`. */
  name?: string;
  /** Sent as `clientInfo` (`initialize`, or every 2026 request's `_meta`). Default `{ name: "lazy-mcp", version: … }`. */
  clientInfo?: Implementation;
  /** Offered to the server through `roots/list`; the `roots` capability is declared only if given (or a roots handler). */
  roots?: Root[];
  /** Largest accepted message in bytes; a larger one closes the connection. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Default per-request timeout in ms when the server config has none. Default 30000. */
  timeout?: number;
  /** Grace for `close()` before SIGTERM/SIGKILL, in ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Listeners attached before the server is spawned. */
  listeners?: Partial<McpClientEvents>;
  /**
   * Aborts the start (spawn and handshake) only: `connect` rejects with `cancelled` at
   * once and the server is stopped in the background. Once connected the process is the client's.
   */
  signal?: AbortSignal;
  /** `"auto"` (default): 2026-07-28 when the server speaks it, else the newest legacy revision; or one revision to insist on. */
  protocolVersion?: 'auto' | ProtocolRevision;
  /** The era this server was found to speak before (e.g. from a cache): negotiation starts there instead of probing. */
  era?: ProtocolEra;
  /** The host's answers to the server's questions; the default for calls that bring none. */
  handlers?: HostHandlers;
  /**
   * Requests not sent yet because they wait for this connection (its start): a question no
   * request claims counts their callers as it counts those of the requests in flight.
   */
  waiting?: () => Iterable<RequestScope>;
  /** Declare these capabilities even without a default handler (calls bring their own). */
  capabilities?: { elicitation?: boolean; sampling?: boolean; roots?: boolean };
  /**
   * Checks an accepted form elicitation answer against the request's `requestedSchema`
   * (and applies its defaults) before it is sent; a throw declines. Default: sent as is.
   */
  validateElicitation?: (request: ElicitRequest, result: ElicitResult) => ElicitResult | Promise<ElicitResult>;
}

/** Per-request options, plus what the manager attaches to route a server's questions. */
export interface RequestOptions extends CallOptions {
  /** Answers the server's questions caused by this request (MRTR rounds, related legacy requests). Default: the client's. */
  handlers?: HostHandlers;
  /**
   * Who makes the request, compared by identity. A legacy server's question that no request
   * claims goes to this request's `handlers` when every request in flight (or waiting for
   * the connection, see `ConnectOptions.waiting`) that names a caller names this one; else
   * to the client's own handlers.
   */
  caller?: object;
  /** How the handlers' context names this tool call (the manager gives its public name). Default: the name and arguments sent. */
  toolCall?: { name: string; arguments: object };
  /** Makes the caller's outcome from the request's before its promise settles: see {@link RequestFinish}. */
  finish?: RequestFinish | undefined;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_CLIENT_INFO: Implementation = { name: 'lazy-mcp', version: '0.1.0' };
/** Longest wait for an answer to a `server/discover` probe before calling the server legacy. */
export const DISCOVER_PROBE_MS = 10_000;

/** What the negotiation found. */
export interface Negotiated {
  era: ProtocolEra;
  protocolVersion: string;
  serverInfo: Implementation;
  capabilities: ServerCapabilities;
  instructions?: string;
}

/** What a request carries for the server's questions about it. */
export interface RequestScope {
  handlers?: HostHandlers;
  toolCall?: { name: string; arguments: object };
  caller?: object;
}

export type ListMethod = 'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list';
