import { describe, expect, it } from 'vitest';
import { mean, summarize } from '../../bench/stats.ts';

describe('summarize', () => {
  it('gives nearest-rank percentiles of a plain sample', () => {
    expect(summarize([5, 1, 4, 2, 3])).toMatchObject({ n: 5, missing: 0, mean: 3, p50: 3, min: 1, max: 5 });
  });

  // A NaN (a run that never saw the mark, e.g. the forward bench's TTFT of a stream with no token
  // text) compares as neither less nor more, so the sort left the other values out of order:
  // [5, NaN, 1, 4, 2, 3] stayed [5, NaN, 1, 2, 3, 4] and its p50 came out 1, its min 5.
  it('leaves a missing value (NaN) out of every figure and counts it', () => {
    const s = summarize([5, NaN, 1, 4, 2, 3]);
    expect(s).toMatchObject({ n: 5, missing: 1, mean: 3, p50: 3, p99: 5, min: 1, max: 5 });
  });

  // One value has no spread: a std of 0 said it had none, and a sweep run with --runs 1 printed
  // "± 0.0" beside every mean (and the JSON said `"std": 0`) as if the runs had agreed exactly.
  it('has no standard deviation (NaN) for a single value, not 0', () => {
    expect(summarize([7]).std).toBeNaN();
    expect(summarize([7, NaN]).std).toBeNaN();
    expect(summarize([7, 7]).std).toBe(0);
  });

  it('with only missing values has no figure, and says how many were missing', () => {
    const s = summarize([NaN, NaN]);
    expect(s.n).toBe(0);
    expect(s.missing).toBe(2);
    expect(s.p50).toBeNaN();
  });
});

describe('mean', () => {
  // mean() summed NaN in, so one run without the figure made the whole mean NaN, where summarize()
  // of the same values gave the others' mean: two figures of one sample that disagreed.
  it('leaves a missing value (NaN) out, as summarize does', () => {
    const values = [5, NaN, 1, 4, 2, 3];
    expect(mean(values)).toBe(3);
    expect(mean(values)).toBe(summarize(values).mean);
  });

  it('has no figure (NaN) for only missing values or none, as summarize', () => {
    expect(mean([NaN, NaN])).toBeNaN();
    expect(mean([])).toBeNaN();
  });
});
