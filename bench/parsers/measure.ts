import type { Run } from './drivers.ts';

export interface MeasureOptions {
  /** Each run is first called for this long, so the JIT has optimised it before timing. */
  warmupMs: number;
  /** A timed batch repeats the run this long (at least once), so the timer's resolution is moot. */
  batchMs: number;
  /** Timed batches per run. */
  reps: number;
}

export interface Measured {
  /**
   * CPU nanoseconds per run, one value per batch: the process's user + system time (the parsing
   * thread plus the GC and JIT threads working for it). CPU rather than wall time because this
   * box is shared: time spent waiting for a core while other jobs run is not parsing cost.
   */
  nsPerRun: number[];
  /** Wall nanoseconds per run, per batch (equal to nsPerRun on an idle machine, give or take GC threads). */
  wallNsPerRun: number[];
}

let sink = 0;

/**
 * Times several runs of the same work against each other: batches interleaved in a rotating
 * order, so that machine noise (this is a shared 2-core box) falls on all of them alike.
 */
export function measureInterleaved(runs: Readonly<Record<string, Run>>, options: MeasureOptions): Record<string, Measured> {
  const names = Object.keys(runs);
  const perBatch: Record<string, number> = {};
  for (const name of names) perBatch[name] = warmUp(runs[name]!, options);
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const wall: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let rep = 0; rep < options.reps; rep++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(rep + k) % names.length]!;
      const run = runs[name]!;
      const count = perBatch[name]!;
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < count; i++) sink += run();
      const elapsed = Number(process.hrtime.bigint() - t0);
      const used = process.cpuUsage(cpu0);
      cpu[name]!.push(((used.user + used.system) * 1000) / count);
      wall[name]!.push(elapsed / count);
    }
  }
  if (sink === -1) console.log(sink);
  return Object.fromEntries(names.map((n) => [n, { nsPerRun: cpu[n]!, wallNsPerRun: wall[n]! }]));
}

/** Runs `run` for the warm-up time (CPU time); returns how many runs fill one batch. */
function warmUp(run: Run, options: MeasureOptions): number {
  const start = process.cpuUsage();
  const cpuMs = () => {
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  let runs = 0;
  do {
    sink += run();
    runs += 1;
  } while (cpuMs() < options.warmupMs);
  return Math.max(1, Math.round(options.batchMs / (cpuMs() / runs)));
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}
