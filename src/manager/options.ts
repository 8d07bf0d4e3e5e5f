import type { ClusterOptions } from '../share/cluster/options.js';
import { McpError } from '../errors.js';
import type { HostHandlers, Implementation, Root } from '../protocol/types.js';
import type { SharedOptions } from '../share/daemon/paths.js';
import type { CredentialsResolver } from './principals/principal-scope.js';
import type { Authorize } from '../transport/http/oauth/provider-types.js';
import type { TokenStore } from '../transport/http/oauth/token-store.js';
import { mustBe } from '../util/check.js';
import { CACHE_HINTS_MODES, type CacheHintsMode } from './catalog/tool-catalog.js';
import { type DeclaredCapabilities, handlersProblem } from './scope/host-handlers.js';

export interface ManagerOptions {
  /** Sent to every server as `clientInfo`. Default `{ name: "lazy-mcp", version }`. */
  clientInfo?: Implementation;
  /** Folder for the tool manifest cache; created if missing. Default: no cache. */
  cacheDir?: string;
  /**
   * The servers' cache hints (2026 era: `ttlMs` on tool and prompt lists).
   * `"revalidate"` (default): a running server's list older than its `ttlMs` is fetched
   * again over its connection; a stopped server's is served as it is (a listing never
   * spawns for a hint) and fetched again at its next real start. `"strict"`: a stale list
   * is fetched again before it is served, starting the server if it must (on failure the
   * stale list is served with a `log`). `"ignore"`: lists are kept until `list_changed`, a
   * config or version change, as for legacy servers (`"honour"`, the old name of
   * `"strict"`, is accepted). `cacheScope: "private"` is honoured in every mode: such a
   * list serves only the token it was made with.
   */
  cacheHints?: CacheHintsMode;
  /** Time a server gets to exit on shutdown before SIGTERM (at half) and SIGKILL, in ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Largest message accepted from a server, in bytes. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Roots offered to servers; the `roots` capability is declared only when given. */
  roots?: Root[];
  /** Folder for lazy-mcp's own state (saved long results). Default: a per-user folder, see `defaultStateDir`. */
  stateDir?: string;
  /**
   * Cap on a tool result's text, in bytes, for a model's context: longer text keeps its head
   * and tail around a marker, and the whole result is saved under `stateDir`, named in the
   * marker. Images and audio are never cut. A call's `maxResultBytes` overrides it. Default: off.
   */
  maxResultBytes?: number;
  /** Where OAuth tokens are kept; default: files under `<stateDir>/oauth`, readable only by the user. */
  tokenStore?: TokenStore;
  /** The interactive OAuth step (show `url`, resolve with the redirect URL): `login`'s default, and step-up on a 403 `insufficient_scope`. */
  authorize?: Authorize;
  /**
   * The host's answers to servers' questions (elicitation, sampling, roots) for calls
   * whose session gives none, and for legacy-era questions no call can be tied to.
   * A capability is declared to servers only when a handler for it is here or
   * `capabilities` names it.
   */
  handlers?: HostHandlers;
  /** Declare these capabilities even when only sessions give handlers for them. */
  capabilities?: DeclaredCapabilities;
  /**
   * Attach to the user's pool daemon (started on demand) instead of spawning stdio servers:
   * one process per server fingerprint for every client of the machine. `true` or the
   * daemon's options. Remote servers are unaffected. Default: off.
   */
  shared?: boolean | SharedOptions;
  /**
   * Join a cluster: every manager naming the same Redis forms one pool, each stdio server
   * running once on the member that owns it; listings, era verdicts and OAuth tokens
   * (encrypted with a key of `secret`) shared in Redis. See `ClusterOptions`. The member
   * joins on first need; its code (and the Redis client) load only then. Default: off.
   */
  cluster?: ClusterOptions;
  /**
   * The credentials of a principal for one server whose entry uses `${principal:NAME}`,
   * when the session's `principal.credentials` lack them. Asked once per session and
   * server; what it gives is never cached on disk, logged or shown.
   */
  credentials?: CredentialsResolver;
}

/** Options of {@link McpServerManager.fromFile} beyond the manager's own. */
export interface FileOptions {
  /**
   * Reload when the file changes (see `reload`), once it has been quiet for `debounceMs`
   * (default 150). A file that does not parse is reported as `configError` and ignored
   * until it does. `shutdown()` stops the watch. Default: off.
   */
  watch?: boolean | { debounceMs?: number };
}

/** The `watch` option's debounce (undefined: the watcher's default); rejects one that is no duration. */
export function watchDebounceMs(watch: FileOptions['watch']): number | undefined {
  const debounceMs = typeof watch === 'object' ? watch.debounceMs : undefined;
  if (debounceMs !== undefined && !(typeof debounceMs === 'number' && debounceMs >= 0 && Number.isFinite(debounceMs))) {
    throw new McpError('invalid-config', `fromFile option ${mustBe('watch.debounceMs', 'a non-negative number of milliseconds', debounceMs)}`, { phase: 'config' });
  }
  return debounceMs;
}

/** Rejects manager options that would make every start fail, naming the option and the value. */
export function checkOptions(options: ManagerOptions): void {
  const checks: [keyof ManagerOptions, (v: unknown) => boolean, string][] = [
    ['maxMessageBytes', (v) => Number.isSafeInteger(v) && (v as number) > 0, 'a positive whole number of bytes'],
    ['shutdownGraceMs', (v) => typeof v === 'number' && v >= 0 && Number.isFinite(v), 'a non-negative number of milliseconds'],
    ['cacheDir', (v) => typeof v === 'string' && v !== '', 'a folder path'],
    ['cacheHints', (v) => (CACHE_HINTS_MODES as readonly unknown[]).includes(v), '"revalidate", "strict" or "ignore"'],
    ['stateDir', (v) => typeof v === 'string' && v !== '', 'a folder path'],
    ['maxResultBytes', (v) => Number.isSafeInteger(v) && (v as number) > 0, 'a positive whole number of bytes'],
    ['roots', (v) => Array.isArray(v) && v.every((r) => typeof r?.uri === 'string'), 'an array of { uri, name? }'],
    ['shared', (v) => typeof v === 'boolean' || (typeof v === 'object' && v !== null && !Array.isArray(v)), 'true, false or { runtimeDir?, idleTimeoutMs?, version?, logFile? }'],
    ['cluster', (v) => typeof v === 'object' && v !== null && typeof (v as ClusterOptions).redis === 'string' && typeof (v as ClusterOptions).advertise === 'string', '{ redis: "redis://host:port", advertise: "http://host:port", secret? }'],
    ['capabilities', (v) => typeof v === 'object' && v !== null && Object.values(v).every((b) => typeof b === 'boolean'), 'an object of booleans { elicitation?, sampling?, roots? }'],
    ['credentials', (v) => typeof v === 'function', 'a function (principal, server) => credentials'],
  ];
  const handlersWrong = handlersProblem(options.handlers, 'manager option');
  if (handlersWrong) throw new McpError('invalid-config', handlersWrong, { phase: 'config' });
  for (const [field, ok, expected] of checks) {
    const value = options[field];
    if (value !== undefined && !ok(value)) {
      throw new McpError('invalid-config', `manager option ${mustBe(field, expected, value)}`, { phase: 'config' });
    }
  }
}
