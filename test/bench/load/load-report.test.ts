import { describe, expect, it } from 'vitest';
import { loadMarkdown, type LoadMeta } from '../../../bench/load/load-report.ts';
import type { ModeSummary, PhaseSummary } from '../../../bench/load/load-summary.ts';

const meta: LoadMeta = { command: 'npm run bench -- load', date: '2026-12-01', node: 'v20', profile: 'test', workload: 'codegen', arrivals: 'Poisson', python: 'python3' };

function mode(p50: number): ModeSummary {
  return {
    sent: 10,
    completed: 10,
    failed: 0,
    completedPerS: 0.4,
    latencyMs: { mean: p50, p50, p90: p50, p99: p50, max: p50 },
    ttftP50Ms: 100,
    g1Ms: 900,
    toolMs: 300,
    toolWaitAfterDecodeMs: 0,
  };
}

// A rate where partial execution changed nothing: on 0.3 ms slower than off at the median.
const phase: PhaseSummary = {
  ratePerS: 0.4,
  durationS: 60,
  offeredPerS: 0.4,
  spanS: 60,
  completedPerS: 0.8,
  meanBatch: 2,
  maxBatchSampled: 4,
  meanStepMs: 6,
  meanWaiting: 0,
  maxWaitingSampled: 0,
  scheduleSlips: 0,
  maxClientLateMs: 1,
  off: mode(7000),
  on: mode(7000.3),
  gainP50Pct: -0.3 / 70,
  gainMeanPct: -0.3 / 70,
  savedP50Ms: -0.3,
};

describe('the load report', () => {
  it('prints a gain and a saving that round to zero as 0.0% and 0, never -0.0% or -0', () => {
    const markdown = loadMarkdown(meta, [phase], 512);
    const row = markdown.split('\n').find((l) => l.startsWith('| 0.40 | 0.80 |'))!;
    expect(row.split(' | ').slice(-3)).toEqual(['0.0%', '0.0%', '0 |']);
    expect(markdown).toContain('p50 7000 → 7000 ms (0.0%, 0 ms saved)');
    expect(markdown).not.toMatch(/-0(\.0)?\b/);
  });

  // A quick run sends a handful of requests per mode and rate: its p99 (and p90) is then the slowest.
  it('says how its percentiles are taken, and what p99 is with under 100 requests', () => {
    expect(loadMarkdown(meta, [phase], 16)).toContain(
      'p50 / p90 / p99: nearest rank (no interpolation) over the mode\'s completed requests; with fewer than 100 of them p99 is the slowest.',
    );
  });

  // "on vs off p50: 25.5%" read as on 25.5% slower; the figure is (off − on) / off, on's gain, as the
  // workloads' improvement. Nothing in the report said which way it ran.
  it('says which way its on-vs-off percentages run', () => {
    expect(loadMarkdown(meta, [phase], 16)).toContain(
      'on vs off = (off − on) / off, as the workloads\' improvement: positive where partial execution was faster; saved at p50 = off p50 − on p50.',
    );
  });
});
