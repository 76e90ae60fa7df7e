import { describe, expect, it } from 'vitest';
import type { SweepPoint } from '../../../bench/sweep/run-sweep.ts';
import { sweepMarkdown } from '../../../bench/sweep/sweep-report.ts';
import { summarize } from '../../../bench/stats.ts';
import { SWEEP_PROFILE } from '../../../bench/sweep/sweep-scenarios.ts';

describe('the sweep report', () => {
  // Math.max() of no errors is -Infinity, which is "within" any target: a sweep that measured
  // nothing said every point met it.
  it('says plainly that there were no points, never that every point was within the target', () => {
    const markdown = sweepMarkdown({ points: [], overheadMs: 20, runs: 4, command: 'npx tsx bench/sweep/run.ts', profile: SWEEP_PROFILE, leftOut: { warmupRuns: 2, calibrationRuns: 2 } });
    expect(markdown).not.toMatch(/every point within|Infinity/);
    expect(markdown).toContain('No points were measured: nothing to compare with the 10% target.');
  });

  // A point whose error is NaN (a figure it lacked) made Math.max() NaN: the verdict printed '–' as
  // the largest error and "NOT every point within", as if a point had missed the target.
  it('says plainly which point had no error figure, and judges the others', () => {
    const point = (targetRatio: number, errorPct: number): SweepPoint => ({
      ratio: targetRatio, targetRatio, g: 100, gOff: 100, gOn: 100, g0: 20, t: 100 * targetRatio, offMs: 300, onMs: 200,
      off: summarize([300]), on: summarize([200]), predictedOffMs: 300, predictedOnMs: 200,
      errorPct, offErrorPct: 2, onErrorPct: 3, measuredSpeedup: 1.5, predictedSpeedup: 1.5,
    });
    const markdown = sweepMarkdown({ points: [point(0.5, 4), point(2, NaN)], overheadMs: 20, runs: 4, command: 'npx tsx bench/sweep/run.ts', profile: SWEEP_PROFILE, leftOut: { warmupRuns: 2, calibrationRuns: 2 } });
    expect(markdown).not.toMatch(/NOT every point within|\*\*–\*\*/);
    expect(markdown).toContain('Largest relative error (speedup, off or on latency) of the 1 point with every figure: **4.0%** — within the 10% target.');
    expect(markdown).toContain('1 of 2 points (target t/g 2.000) had a figure missing, so no error to compare: the target is not shown to hold for every point.');
  });

  // Only the measured runs make a point's figures: the warm-up requests and one calibration request
  // per point (a zero-time tool, for its g and for O) are left out, and the report did not say so.
  it('says which requests it left out of the points, how many and why', () => {
    const markdown = sweepMarkdown({ points: [], overheadMs: 20, runs: 4, command: 'npx tsx bench/sweep/run.ts', profile: SWEEP_PROFILE, leftOut: { warmupRuns: 2, calibrationRuns: 3 } });
    expect(markdown).toContain(
      'Left out of every point\'s figures: 2 warm-up requests (JIT, sockets, the tokenizer\'s caches) and 3 calibration requests ' +
        '(one per point, with a zero-time tool: its g aims t, and together they give O).',
    );
  });
});
