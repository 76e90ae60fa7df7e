import { describe, expect, it } from 'vitest';
import { sweepMarkdown } from '../../../bench/sweep/sweep-report.ts';
import { SWEEP_PROFILE } from '../../../bench/sweep/sweep-scenarios.ts';

describe('the sweep report', () => {
  // Math.max() of no errors is -Infinity, which is "within" any target: a sweep that measured
  // nothing said every point met it.
  it('says plainly that there were no points, never that every point was within the target', () => {
    const markdown = sweepMarkdown({ points: [], overheadMs: 20, runs: 4, command: 'npx tsx bench/sweep/run.ts', profile: SWEEP_PROFILE });
    expect(markdown).not.toMatch(/every point within|Infinity/);
    expect(markdown).toContain('No points were measured: nothing to compare with the 10% target.');
  });
});
