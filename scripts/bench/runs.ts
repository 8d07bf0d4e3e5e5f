import { collect } from './procs.js';
import { type Summary, summarize } from './stats.js';

/** One measured quantity of one figure, with every run of every variant that measured it. */
export interface Metric {
  figure: number;
  id: string;
  label: string;
  unit: string;
  /** Which way is better; ratios are always `variant / reference`. */
  better: 'lower' | 'higher' | 'none';
  /** Raw values, one per run, keyed by variant (client) name. */
  runs: Record<string, number[]>;
}

export interface MetricSummary extends Metric {
  summary: Record<string, Summary>;
}

export function withSummary(metric: Metric): MetricSummary {
  return { ...metric, summary: Object.fromEntries(Object.entries(metric.runs).map(([variant, values]) => [variant, summarize(values)])) };
}

/** Collects the runs of one figure's metrics. */
export class Figure {
  readonly metrics = new Map<string, Metric>();

  constructor(readonly figure: number) {}

  define(id: string, label: string, unit: string, better: Metric['better']): this {
    this.metrics.set(id, { figure: this.figure, id, label, unit, better, runs: {} });
    return this;
  }

  record(id: string, variant: string, value: number): void {
    const metric = this.metrics.get(id);
    if (!metric) throw new Error(`figure ${this.figure}: no metric ${id}`);
    (metric.runs[variant] ??= []).push(value);
  }

  list(): Metric[] {
    return [...this.metrics.values()];
  }
}

export interface Variant {
  name: string;
  /** Runs in rounds `0 … rounds - 1` only; default every round. */
  rounds?: number;
  run(round: number): Promise<void>;
}

/**
 * Runs every variant once per round, the variants alternating run by run, and the
 * order rotating each round (A B C, B C A, C A B, …) so that no variant always follows
 * the same one. A full GC before each run (when exposed) keeps one variant's garbage
 * from being collected on another's clock.
 */
export async function alternate(rounds: number, variants: readonly Variant[], progress?: (text: string) => void): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const active = variants.filter((v) => v.rounds === undefined || round < v.rounds);
    const shift = round % Math.max(1, active.length);
    const order = [...active.slice(shift), ...active.slice(0, shift)];
    for (const variant of order) {
      collect();
      await variant.run(round);
    }
    progress?.(`round ${round + 1}/${rounds}`);
  }
}
