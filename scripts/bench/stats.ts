/** Median, range and count of one figure's runs. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length };
}

/** The q-quantile of ascending `sorted`, interpolated between neighbours. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Milliseconds since `start` (from {@link now}). */
export function since(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export const now = (): bigint => process.hrtime.bigint();
