import type { McpErrorCode } from '../../errors.js';

/** One server's figures since the manager was made. Latencies are in ms, from a bounded histogram. */
export interface ServerMetrics {
  /** Requests sent on behalf of callers (tool calls, prompts, reads, listings), finished or not. */
  calls: number;
  /** Finished requests that failed, by error code; a tool's own `isError` result is not an error. */
  errors: Partial<Record<McpErrorCode, number>>;
  /** Requests waiting for an answer now. */
  inFlight: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; count: number };
  /** Starts that reached `ready`, and of those the ones after the first. */
  starts: number;
  restarts: number;
  /** Epoch ms of the last start that reached `ready`. */
  lastStartAt?: number;
  /** How long the last start took, ms. */
  lastStartMs?: number;
  /** Bytes of messages sent to and received from the server, where the transport counts them. */
  bytesOut: number;
  bytesIn: number;
}

/** Byte counters a connection keeps; read when figures are asked for, never on the call path. */
export interface TrafficCounters {
  readonly bytesIn: number;
  readonly bytesOut: number;
}

/**
 * Log-linear buckets: 8 per power of two from 1 µs to ~1 h, so a quantile is within
 * ~9% of the truth and the histogram never grows (about 2 KB a server).
 */
const SUB_BUCKETS = 8;
const MIN_MS = 0.001;
const BUCKETS = 32 * SUB_BUCKETS;

class Histogram {
  // Made at the first record: every configured server has a histogram from the start, and
  // its kilobyte of buckets (an ArrayBuffer each scavenge sweeps) is paid only by the ones called.
  private counts: Uint32Array | undefined;
  count = 0;
  max = 0;

  record(ms: number): void {
    this.count++;
    if (ms > this.max) this.max = ms;
    (this.counts ??= new Uint32Array(BUCKETS))[bucketOf(ms)]++;
  }

  quantile(q: number): number {
    if (this.counts === undefined) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i] as number;
      if (seen >= rank) return Math.min(upperOf(i), this.max);
    }
    return this.max;
  }
}

function bucketOf(ms: number): number {
  if (!(ms > MIN_MS)) return 0;
  const i = Math.floor(Math.log2(ms / MIN_MS) * SUB_BUCKETS);
  return Math.min(i, BUCKETS - 1);
}

function upperOf(bucket: number): number {
  return MIN_MS * 2 ** ((bucket + 1) / SUB_BUCKETS);
}

/** The live counters behind one server's {@link ServerMetrics}; cheap enough to leave on. */
export class MetricsRecorder {
  private calls = 0;
  private inFlight = 0;
  private readonly errors: Partial<Record<McpErrorCode, number>> = Object.create(null);
  private readonly latency = new Histogram();
  private starts = 0;
  private lastStartAt: number | undefined;
  private lastStartMs: number | undefined;
  /** Bytes of connections that are gone. */
  private bytesOut = 0;
  private bytesIn = 0;
  private live: TrafficCounters | undefined;

  /**
   * Marks a request as sent and returns its start time, to hand to {@link end} exactly once.
   * A number rather than a closure: the call path allocates nothing for its metrics.
   */
  begin(): number {
    this.calls++;
    this.inFlight++;
    return performance.now();
  }

  /** Records the end of a request begun at `began`, with its error code when it failed. */
  end(began: number, errorCode?: McpErrorCode): void {
    this.inFlight--;
    this.latency.record(performance.now() - began);
    if (errorCode !== undefined) this.errors[errorCode] = (this.errors[errorCode] ?? 0) + 1;
  }

  /** Starts after the first. */
  get restarts(): number {
    return Math.max(0, this.starts - 1);
  }

  started(durationMs: number): void {
    this.starts++;
    this.lastStartAt = Date.now();
    this.lastStartMs = durationMs;
  }

  /** The running connection's counters (undefined: none, or its transport keeps none); the previous one's are kept. */
  connected(traffic: TrafficCounters | undefined): void {
    if (this.live) {
      this.bytesIn += this.live.bytesIn;
      this.bytesOut += this.live.bytesOut;
    }
    this.live = traffic;
  }

  snapshot(): ServerMetrics {
    const h = this.latency;
    return {
      calls: this.calls,
      errors: { ...this.errors },
      inFlight: this.inFlight,
      latencyMs: { p50: h.quantile(0.5), p95: h.quantile(0.95), p99: h.quantile(0.99), max: h.max, count: h.count },
      starts: this.starts,
      restarts: this.restarts,
      ...(this.lastStartAt === undefined ? {} : { lastStartAt: this.lastStartAt, lastStartMs: this.lastStartMs }),
      bytesOut: this.bytesOut + (this.live?.bytesOut ?? 0),
      bytesIn: this.bytesIn + (this.live?.bytesIn ?? 0),
    };
  }
}
