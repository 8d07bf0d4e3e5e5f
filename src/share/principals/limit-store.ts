/**
 * Token buckets for rate limits, behind a store: in memory here; a shared store (Redis, for a
 * cluster) implements the same one method atomically.
 */

/** A bucket's shape: it holds up to `capacity` tokens and gains `refillPerSecond` a second. */
export interface BucketSpec {
  capacity: number;
  refillPerSecond: number;
}

/** The outcome of taking a token from each of several buckets at once. */
export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

export interface LimitStore {
  /**
   * Takes one token from every bucket named, or none at all when any is empty: then says
   * when all would hold one again. `now` in ms (the caller's clock, so a test can move it).
   */
  take(buckets: readonly { key: string; spec: BucketSpec }[], now: number): Promise<TakeResult> | TakeResult;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets in this process's memory; at most `maxBuckets` (the longest unused go first: a full bucket is the same as none). */
export class MemoryLimitStore implements LimitStore {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly maxBuckets = 100_000) {}

  take(requests: readonly { key: string; spec: BucketSpec }[], now: number): TakeResult {
    const filled = requests.map(({ key, spec }) => {
      const bucket = this.buckets.get(key);
      const tokens = bucket ? Math.min(spec.capacity, bucket.tokens + ((now - bucket.at) / 1000) * spec.refillPerSecond) : spec.capacity;
      return { key, spec, tokens };
    });
    const empty = filled.filter((b) => b.tokens < 1);
    if (empty.length > 0) {
      const waits = empty.map((b) => (b.spec.refillPerSecond > 0 ? Math.ceil(((1 - b.tokens) / b.spec.refillPerSecond) * 1000) : Number.MAX_SAFE_INTEGER));
      return { ok: false, retryAfterMs: Math.max(1, ...waits) };
    }
    for (const { key, tokens } of filled) {
      // Re-inserted: the map's order is the order of last use.
      this.buckets.delete(key);
      this.buckets.set(key, { tokens: tokens - 1, at: now });
    }
    while (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
    return { ok: true };
  }
}
