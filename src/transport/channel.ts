import type { NotificationMessage, RequestMessage, ResponseMessage } from 'vscode-jsonrpc';
import type { McpError } from '../errors.js';
import type { HeaderParam } from './http/param-headers.js';
import type { Disposable } from '../util/listeners.js';

export type { Disposable };

/** How long a closing server gets before SIGTERM (at half) and SIGKILL, in ms, unless told otherwise. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 2000;

/** One JSON-RPC message, in either direction. */
export type JsonRpcMessage = RequestMessage | ResponseMessage | NotificationMessage;
export type RequestId = number | string;

/** What a transport knows about a message beyond its body. */
export interface MessageContext {
  /**
   * The request this message belongs to: on HTTP, a server message that arrived on a
   * request's own response stream; on send, the request an answer or notification is for.
   */
  relatedTo?: RequestId;
}

/** What a channel can tell about its peer, for status and error messages. */
export interface ChannelInfo {
  readonly transport: 'stdio' | 'http' | 'sse' | 'memory';
  /** stdio: the server process's pid (also its process group). */
  readonly pid?: number;
  /** http / sse: the endpoint. */
  readonly url?: string;
  /** Legacy Streamable HTTP: the `Mcp-Session-Id` the server gave. */
  readonly sessionId?: string;
  /** stdio: the last stderr lines; an empty list elsewhere. */
  stderrTail(): string[];
  /**
   * The era to try first here whatever the caller's hint (which is about the server, from
   * a cache): the peer is known to speak it (the pool daemon speaks both eras).
   */
  readonly preferredEra?: '2026' | 'legacy';
  /** Bytes received from and sent to the server so far, where the transport counts them (stdio). */
  readonly traffic?: { readonly bytesIn: number; readonly bytesOut: number };
  /**
   * The connection carries one request and ends with its answer (a stateless 2026 HTTP
   * round, server side): whatever that request starts and must outlive it belongs to no
   * connection. False everywhere else.
   */
  readonly singleRequest: boolean;
}

/** How a server process ended: its exit code, or the signal that killed it. */
export interface ExitStatus {
  exitCode?: number;
  signal?: string;
}

/**
 * Messages in and out of one server, whatever carries them (a child's pipes, HTTP, an
 * in-memory pair). Everything above the transport layer talks to a server through this.
 */
export interface Channel {
  /**
   * Sends one message. Resolves once it is handed to the transport; rejects with an
   * `McpError` when this one message cannot be delivered (it cannot be encoded, its HTTP
   * request was refused) while the channel stays open. A channel-wide failure closes
   * the channel instead (see `onClose`).
   */
  send(message: JsonRpcMessage, context?: MessageContext): Promise<void>;
  /**
   * {@link send} without a promise, for the request path: `failed` is called (at most once,
   * maybe before `post` returns) with what `send` would reject with, and the message. Where
   * the transport allows it (stdio), a request costs no promise and no microtask turns for
   * its write; elsewhere it is `send` with the failure reported.
   */
  post(message: JsonRpcMessage, failed: (error: unknown, message: JsonRpcMessage) => void, context?: MessageContext): void;
  /** Every message from the peer, in order, with what the transport knows of it. */
  onMessage(listener: (message: JsonRpcMessage, context: MessageContext) => void): Disposable;
  /** A line or body that is not JSON-RPC and was skipped (a stray `console.log`). */
  onNoise(listener: (text: string) => void): Disposable;
  /**
   * Fires once when the channel is over: `peer-exited` (exit status and stderr tail),
   * `peer-eof`, `connect-failed`, `protocol-error` (oversized or broken framing), or
   * `closed` after `close()`.
   */
  onClose(listener: (reason: McpError) => void): Disposable;
  /**
   * The sender no longer waits for request `id` (timed out, cancelled): the transport
   * tells the peer in the way of its era. 2026 Streamable HTTP closes that request's
   * stream; legacy Streamable HTTP sends `notifications/cancelled` with `reason`, then
   * closes it; stdio drops the frame if it is still queued, else sends
   * `notifications/cancelled`; every other channel sends `notifications/cancelled`.
   */
  abandon(id: RequestId, reason?: string): void;
  /** Each stderr line of the server process, as it arrives (a process's channel; never fires elsewhere). */
  onStderr(listener: (line: string) => void): Disposable;
  /** Fires once with the process's exit status, also after `close()` (a process's channel; never fires elsewhere). */
  onExit(listener: (status: ExitStatus) => void): Disposable;
  /**
   * The negotiated revision: what decides the era's behaviour below the seam (HTTP's
   * `MCP-Protocol-Version` header, its streams, {@link abandon}). Ignored where the era
   * changes nothing on the wire.
   */
  setProtocolVersion(version: string): void;
  /**
   * 2026 Streamable HTTP: the parameters each listed tool marks with `x-mcp-header`, which
   * the transport mirrors into `Mcp-Param-<Name>` headers on that tool's `tools/call`
   * (SEP-2243). Replaces what an earlier listing gave. Ignored by other transports.
   */
  setToolHeaders(tools: ReadonlyMap<string, readonly HeaderParam[]>): void;
  /**
   * Ends the channel: a process gets stdin closed, SIGTERM at `graceMs / 2` and SIGKILL
   * at `graceMs`; an HTTP session is deleted. Idempotent; never throws.
   */
  close(graceMs?: number): Promise<void>;
  readonly info: ChannelInfo;
  /** Whether the channel still carries messages. */
  readonly isOpen: boolean;
}
