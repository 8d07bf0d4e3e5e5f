import type { CacheHints } from '../../protocol/types.js';

/**
 * How long a listing may be reused, from the server's cache hints (2026-07-28): when it
 * was received and until when it is fresh, both in ms since the epoch (the cache outlives
 * the process, so not a monotonic clock), and whether it may cross authorization contexts.
 */
export interface Freshness {
  received: number;
  until: number;
  scope: 'public' | 'private';
}

/** Which listings a freshness is for. */
export type Listing = 'tools' | 'prompts';

/** What a server's listings said about their own lifetimes; a listing without hints (legacy era) has none and stays until invalidated. */
export type ListingFreshness = Partial<Record<Listing, Freshness>>;

/** Now, in ms since the epoch with a fraction: a listing answered within the millisecond a request was made is still told apart. */
export function clock(): number {
  return performance.timeOrigin + performance.now();
}

export function freshnessOf(hints: Required<CacheHints>, received = clock()): Freshness {
  return { received, until: received + hints.ttlMs, scope: hints.cacheScope };
}

/**
 * May a listing serve a request made at `asked`? Yes while its lifetime lasts, and always
 * when it was received after the request was made: a start that listed for this very
 * request does not list twice, even with `ttlMs: 0`.
 */
export function isFresh(freshness: Freshness | undefined, asked: number, now = clock()): boolean {
  return freshness === undefined || freshness.received > asked || now < freshness.until;
}

export function isFreshness(value: unknown): value is Freshness {
  const f = value as Freshness;
  return (
    typeof f === 'object' &&
    f !== null &&
    Number.isFinite(f.received) &&
    Number.isFinite(f.until) &&
    f.until >= f.received &&
    (f.scope === 'public' || f.scope === 'private')
  );
}

export function isListingFreshness(value: unknown): value is ListingFreshness {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { tools, prompts, ...rest } = value as ListingFreshness;
  return Object.keys(rest).length === 0 && (tools === undefined || isFreshness(tools)) && (prompts === undefined || isFreshness(prompts));
}
