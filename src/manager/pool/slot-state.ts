import type { McpError } from '../../errors.js';
import type { McpClient } from '../../protocol/client.js';
import type { SandboxStatus } from '../../transport/stdio/sandbox/policy.js';
import { sandboxToolName } from '../../transport/stdio/sandbox/tool.js';
import type { ServerEntry } from '../config/config.js';

/**
 * Where a server is in its life. Each state names one situation, whatever the timers say:
 *
 * - `idle`: configured and never started by this manager (or not since a reload).
 * - `starting`: a start is in flight (spawn, handshake, tool listing); callers share it.
 * - `ready`: running and answering; calls go straight to it.
 * - `stopped`: it ran and is not running now: it crashed or exited, was stopped for
 *   being idle, or is between the stop and the start of a restart. The next use starts it.
 * - `backoff`: its last start failed (fewer than {@link MAX_FAILED_STARTS} in a row).
 *   Until the backoff wait ends, calls fail fast with `unavailable`; after it, the next
 *   use starts it again. The state stays `backoff` until that start begins.
 * - `failed`: {@link MAX_FAILED_STARTS} starts in a row failed; calls fail fast with
 *   `unavailable` until `restart(server)`.
 * - `needs-auth`: it needs authorization; `login(server)` first (HTTP servers).
 * - `invalid`: its config entry is wrong (`lastError` says where).
 * - `unsupported`: its transport is not supported by this build.
 * - `disabled`: `disabled: true` in the config.
 * - `closed`: the manager was shut down; it never starts again.
 */
export type ServerState =
  | 'idle'
  | 'starting'
  | 'ready'
  | 'stopped'
  | 'backoff'
  | 'failed'
  | 'needs-auth'
  | 'invalid'
  | 'unsupported'
  | 'disabled'
  | 'closed';

/** The protocol revision of the 2026 (stateless) era; every other revision is the legacy `initialize` era. */
export const ERA_2026_VERSION = '2026-07-28';

export interface ServerStatus {
  state: ServerState;
  /** How the server is reached, from its config entry. */
  transport: 'stdio' | 'http' | 'sse';
  /** The protocol era of the running server: `2026` for revision 2026-07-28, else `legacy`. */
  era?: '2026' | 'legacy';
  /** The protocol revision the running server speaks. */
  protocolVersion?: string;
  /** The process id of the running stdio server. */
  pid?: number;
  /** The endpoint of an HTTP or SSE server. */
  url?: string;
  /** A sandboxed stdio server: the tool and what the sandbox lets it see. */
  sandbox?: SandboxStatus;
  /** Times the server was started again after its first start. */
  restarts: number;
  lastError?: McpError;
  /** Tools known for it (from a start, or the manifest cache). */
  tools?: number;
  /** Prompts known for it. */
  prompts?: number;
  /** A server run per principal or per session: its instances alive (starting or ready). */
  instances?: number;
}

/** First wait after a failed start; it doubles each failure up to {@link BACKOFF_CAP_MS}. */
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 30_000;
/** Failed starts in a row after which a server is `failed` until `restart()`. */
export const MAX_FAILED_STARTS = 5;

/** The wait after the `failures`-th failed start in a row: 250 ms, 500 ms, 1 s, … capped at 30 s. */
export function backoffDelay(failures: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), BACKOFF_CAP_MS);
}

export function eraOf(protocolVersion: string): '2026' | 'legacy' {
  return protocolVersion === ERA_2026_VERSION ? '2026' : 'legacy';
}

/** What `status()` shows of a slot: its entry, its state, and the running connection if any. */
export function statusOf(entry: ServerEntry, state: ServerState, client: McpClient | undefined, restarts: number, lastError: McpError | undefined): ServerStatus {
  const remote = 'config' in entry && 'url' in entry.config ? entry.config : undefined;
  const sandbox = 'config' in entry && 'sandbox' in entry.config ? entry.config.sandbox : undefined;
  return {
    state,
    transport: remote?.transport ?? 'stdio',
    ...(remote ? { url: remote.shownUrl } : {}),
    ...(sandbox ? { sandbox: { tool: sandboxToolName(), ...sandbox, read: [...sandbox.read], write: [...sandbox.write], env: [...sandbox.env] } } : {}),
    ...(client?.isOpen ? { ...(Number.isNaN(client.pid) ? {} : { pid: client.pid }), protocolVersion: client.protocolVersion, era: eraOf(client.protocolVersion) } : {}),
    restarts,
    ...(lastError ? { lastError } : {}),
  };
}
