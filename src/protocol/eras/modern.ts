import { McpError, type McpPhase, serverLabel } from '../../errors.js';
import { copyWith } from '../../util/copy-with.js';
import { resultSchemas } from '../schemas/lazy-schemas.js';
import type { Label } from '../session-errors.js';
import type { CacheHints, Implementation } from '../types.js';
import { MODERN_PROTOCOL_VERSION } from '../types.js';

// The 2026-07-28 revision's request envelope and result envelope.

import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY } from '../../transport/mcp-constants.js';

export {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  UNSUPPORTED_PROTOCOL_VERSION,
} from '../../transport/mcp-constants.js';
/** Rounds of `input_required` one request may take before we call it a runaway. */
export const MAX_INPUT_ROUNDS = 10;
/** Methods on which a server may answer `input_required`. */
export const MRTR_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** `params` with the per-request `_meta` every 2026 request carries. */
export function withEnvelope(params: Record<string, unknown>, clientInfo: Implementation, capabilities: Record<string, unknown>): Record<string, unknown> {
  // Copies by copyWith, not spread: this runs on every request of the era.
  const meta: Record<string, unknown> = copyWith(params._meta as object | undefined, PROTOCOL_VERSION_META_KEY, MODERN_PROTOCOL_VERSION);
  meta[CLIENT_INFO_META_KEY] = clientInfo;
  meta[CLIENT_CAPABILITIES_META_KEY] = capabilities;
  return copyWith(params, '_meta', meta);
}

export type ModernResult =
  | { kind: 'complete'; result: Record<string, unknown> }
  | { kind: 'input_required'; inputRequests: Record<string, { method: string; params?: unknown }>; requestState?: string };

/** Reads a 2026 result by its `resultType`; anything else than `complete` / `input_required` is a `protocol-error`. */
export function decodeModernResult(server: string | undefined, phase: McpPhase, method: string, raw: unknown): ModernResult {
  // The common case, checked by hand (this runs on every result of the era); zod reads the rest and names what is wrong.
  const plain = raw as { resultType?: unknown; ttlMs?: unknown; cacheScope?: unknown } | null;
  if (
    typeof plain === 'object' &&
    plain !== null &&
    plain.resultType === 'complete' &&
    (plain.ttlMs === undefined || typeof plain.ttlMs === 'number') &&
    (plain.cacheScope === undefined || typeof plain.cacheScope === 'string')
  ) {
    const { resultType: _type, ...result } = plain as Record<string, unknown>;
    return { kind: 'complete', result };
  }
  const fail = (why: string) => new McpError('protocol-error', `${serverLabel(server)}invalid ${phase} result: ${why}`, { server, phase });
  const parsed = resultSchemas().ResultTypeSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw fail(`${issue.path.map(String).join('.') || 'result'}: ${issue.path[0] === 'resultType' ? 'servers of revision 2026-07-28 must send a resultType' : issue.message}`);
  }
  const envelope = parsed.data;
  if (envelope.resultType === 'input_required') {
    if (!MRTR_METHODS.has(method)) throw fail(`resultType "input_required" is not allowed on ${method}`);
    if (envelope.inputRequests === undefined && envelope.requestState === undefined) throw fail('input_required carries neither inputRequests nor requestState');
    return { kind: 'input_required', inputRequests: envelope.inputRequests ?? {}, requestState: envelope.requestState };
  }
  if (envelope.resultType !== 'complete') throw fail(`resultType: unsupported value ${JSON.stringify(envelope.resultType.slice(0, 80))}`);
  const { resultType: _type, ...result } = raw as Record<string, unknown>;
  return { kind: 'complete', result };
}

/**
 * A complete result's cache hints as the caching page reads them: an absent or unusable
 * `ttlMs` is 0 (immediately stale) and anything but `"public"` is `"private"` (the
 * safe reading: never shared across authorization contexts). Read only for listings.
 */
export function cacheHintsOf(result: { ttlMs?: unknown; cacheScope?: unknown }): Required<CacheHints> {
  const ttl = result.ttlMs;
  return { ttlMs: typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? ttl : 0, cacheScope: result.cacheScope === 'public' ? 'public' : 'private' };
}

/** The hints of a listing that spans pages: the shortest lifetime, and private if any page is. */
export function combineCacheHints(a: Required<CacheHints>, b: Required<CacheHints>): Required<CacheHints> {
  return { ttlMs: Math.min(a.ttlMs, b.ttlMs), cacheScope: a.cacheScope === 'public' && b.cacheScope === 'public' ? 'public' : 'private' };
}

export function tooManyRounds(server: string | undefined, phase: McpPhase, label: Label): McpError {
  return new McpError(
    'protocol-error',
    `${serverLabel(server)}${label} asked for input ${MAX_INPUT_ROUNDS} times in a row (input_required); the server's multi round-trip request does not end`,
    { server, phase },
  );
}

/** What a `subscriptions/listen` asks for (and its acknowledgement says was granted). */
export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}
