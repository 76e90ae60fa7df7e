export interface Summary {
  /** Values summarized: the sample less its missing ones. */
  n: number;
  /** Values left out as missing (NaN: a run that never saw the figure), so a report can say how many. */
  missing: number;
  mean: number;
  /** Sample standard deviation (n − 1); NaN for a single value, which has none. */
  std: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/**
 * Sample statistics; percentiles by nearest rank (no interpolation across a handful of runs).
 * NaN stands for a figure a run did not have: it is left out and counted in `missing`. Sorted
 * in, it broke every percentile, not only its own: NaN compares as neither less nor more, so
 * the sort left the other values out of order ([5, NaN, 1, 4, 2, 3] gave p50 1 and min 5).
 */
export function summarize(values: readonly number[]): Summary {
  const present = values.filter((v) => !Number.isNaN(v));
  const missing = values.length - present.length;
  const n = present.length;
  if (n === 0) return { n, missing, mean: NaN, std: NaN, p50: NaN, p99: NaN, min: NaN, max: NaN };
  const sorted = present.sort((a, b) => a - b);
  const mean = sumOf(sorted) / n;
  // One value has no spread to estimate (n − 1 = 0): NaN, a figure the reports print as "–". A 0
  // here read as "the runs agreed exactly" (a sweep with --runs 1 printed "± 0.0", the JSON 0).
  const variance = n > 1 ? sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) : NaN;
  const rank = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))]!;
  return { n, missing, mean, std: Math.sqrt(variance), p50: rank(0.5), p99: rank(0.99), min: sorted[0]!, max: sorted[n - 1]! };
}

/**
 * The mean of the values a run had, as summarize() gives it: NaN (a figure a run did not have) is
 * left out, where it made the whole mean NaN, so one missing run took every run's figure with it.
 * Only missing values, or none, give NaN: no figure (a report prints "–"). Where a report must say
 * how many were left out, take summarize()'s `missing`.
 */
export function mean(values: readonly number[]): number {
  const present = values.filter((v) => !Number.isNaN(v));
  return present.length ? sumOf(present) / present.length : NaN;
}

const sumOf = (values: readonly number[]): number => values.reduce((s, v) => s + v, 0);
