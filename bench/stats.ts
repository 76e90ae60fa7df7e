export interface Summary {
  n: number;
  mean: number;
  std: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/** Sample statistics; percentiles by nearest rank (no interpolation across a handful of runs). */
export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  if (n === 0) return { n, mean: NaN, std: NaN, p50: NaN, p99: NaN, min: NaN, max: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / n;
  const variance = n > 1 ? sorted.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) : 0;
  const rank = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(p * n) - 1))]!;
  return { n, mean, std: Math.sqrt(variance), p50: rank(0.5), p99: rank(0.99), min: sorted[0]!, max: sorted[n - 1]! };
}

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((s, v) => s + v, 0) / values.length : NaN;
}
