import { McpError, type McpErrorCode } from '../../errors.js';
import type { Root } from '../../protocol/types.js';

/**
 * What travels between a client and the pool daemon besides MCP itself. A connection
 * opens with one request, `lazy-mcp/attach` (or `lazy-mcp/control` for the CLI), whose
 * id is a string so that it never meets the MCP session's numeric ids; after the answer
 * the socket carries plain MCP, newline-framed as on stdio, plus three additions:
 * a message may carry {@link RELATED_KEY} (the request it is about, as HTTP streams tell
 * it), and the daemon sends {@link STDERR_NOTE} lines, {@link STARTED_NOTE} and one {@link CLOSING_NOTE}.
 */

/** Bumped whenever the bytes on the socket change meaning; part of the socket's name. */
export const WIRE_VERSION = 2;
export const ATTACH_METHOD = 'lazy-mcp/attach';
export const CONTROL_METHOD = 'lazy-mcp/control';
export const HELLO_ID = 'lazy-mcp/hello';
/** One stderr line of the shared server: `{ line }`. */
export const STDERR_NOTE = 'notifications/lazy-mcp/stderr';
/** The shared server's process started (after the attach, which the manifest cache answered): `{ pid }`. */
export const STARTED_NOTE = 'notifications/lazy-mcp/started';
/** Why the daemon ends this connection (the server exited, the daemon stops): `{ error }`. */
export const CLOSING_NOTE = 'notifications/lazy-mcp/closing';
/** Top-level member naming the request a message is about (a server's question about a call). */
export const RELATED_KEY = 'lazy-mcp/relatedTo';

/** The server a client wants, after expansion: everything that makes two entries the same process. */
export interface SharedSpec {
  command: string;
  args: string[];
  /** The whole environment the server starts with, as the client would have given it. */
  env: Record<string, string>;
  cwd: string;
  framing: 'newline' | 'content-length';
  /** Offered through roots/list when no call's client is asking. */
  roots?: Root[];
  /** What the client may be asked (declared to the server). */
  capabilities: { elicitation: boolean; sampling: boolean; roots: boolean };
  /** What the client calls itself (`initialize`'s `clientInfo`): a server may list other tools to another client. */
  clientInfo: { name: string; version: string };
}

/** The attach request: who asks, for which server. */
export interface AttachParams {
  wire: number;
  version: string;
  /** The daemon's secret, read from its file: proof that the client is the user's (see secret.ts). */
  secret: string;
  /** The client's pid, for `daemon status`. */
  pid: number;
  /** The client's name for the server (labels the daemon's log and status). */
  name: string;
  spec: SharedSpec;
  /** The start's time-out (the server's handshake), in ms. */
  timeout?: number;
  maxMessageBytes?: number;
}

export interface AttachResult {
  version: string;
  daemonPid: number;
  fingerprint: string;
  /** 0 while the server does not run (the manifest cache answers); {@link STARTED_NOTE} tells it later. */
  serverPid: number;
  /**
   * The era the server speaks (to the daemon), which the client speaks to the daemon too:
   * a legacy server's calls then cross the daemon with no 2026 envelope to add on one side
   * and take off on the other (and take its short path, see call-relay.ts). Absent: 2026.
   */
  era?: 'legacy' | '2026';
}

export interface ControlParams {
  wire: number;
  version: string;
  secret: string;
  op: 'status' | 'stop';
}

/** What `daemon status` shows. */
export interface DaemonStatus {
  version: string;
  pid: number;
  uptimeMs: number;
  rssBytes: number;
  socket: string;
  idleTimeoutMs: number;
  clients: { pid: number; connections: number }[];
  servers: { name: string; fingerprint: string; pid?: number; state: string; sessions: number; rssBytes?: number; startedAt: string }[];
}

const CODES = new Set<McpErrorCode>([
  'invalid-config', 'unsupported-transport', 'unknown-server', 'unknown-tool', 'unknown-prompt', 'invalid-arguments', 'spawn-failed',
  'connect-failed', 'auth-required', 'timeout', 'cancelled', 'peer-exited', 'peer-eof', 'protocol-error', 'rpc-error', 'unavailable', 'closed',
]);

/** An error as it crosses the socket: its code and the fields a client shows. */
export interface WireError {
  code: string;
  message: string;
  exitCode?: number;
  signal?: string;
  stderrTail?: string[];
  phase?: string;
}

export function toWire(error: unknown): WireError {
  if (!(error instanceof McpError)) return { code: 'protocol-error', message: error instanceof Error ? error.message : String(error) };
  const { code, message, exitCode, signal, stderrTail, phase } = error;
  return { code, message, ...(exitCode === undefined ? {} : { exitCode }), ...(signal === undefined ? {} : { signal }), ...(stderrTail ? { stderrTail } : {}), ...(phase ? { phase } : {}) };
}

/** The daemon's error as the client's own; a code this version does not know is `unavailable`. */
export function fromWire(wire: unknown, server: string | undefined): McpError {
  const w = (typeof wire === 'object' && wire !== null ? wire : {}) as Partial<WireError>;
  const code = CODES.has(w.code as McpErrorCode) ? (w.code as McpErrorCode) : 'unavailable';
  const message = typeof w.message === 'string' ? w.message : 'the pool daemon gave no reason';
  return new McpError(code, message, {
    server,
    ...(typeof w.exitCode === 'number' ? { exitCode: w.exitCode } : {}),
    ...(typeof w.signal === 'string' ? { signal: w.signal } : {}),
    ...(Array.isArray(w.stderrTail) ? { stderrTail: w.stderrTail.filter((l): l is string => typeof l === 'string') } : {}),
  });
}
