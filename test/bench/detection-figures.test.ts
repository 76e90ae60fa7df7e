import { describe, expect, it } from 'vitest';
import type { RoundSummary, TimelineEvent } from '../../gateway/timeline.ts';
import { detectionGenerationMs, medianExamples, type RunRecord } from '../../bench/run-ab.ts';
import { progressDetail } from '../../bench/run-workloads.ts';

const record = (mode: 'on' | 'off', totalMs: number, detectedMs?: number): RunRecord => ({
  mode,
  totalMs,
  ttftMs: 1,
  rounds: [],
  failedCalls: 0,
  ...(detectedMs === undefined ? {} : { detection: { detectedMs, boundMs: 10 } }),
});

// The validation workload's figure is the time to detect the invalid call, not the request's end.
describe('a detection workload', () => {
  it("progress line gives the run's time to detect, as its report does", () => {
    expect(progressDetail(record('on', 900, 123.4))).toBe('last on: detected at 123 ms');
    expect(progressDetail(record('off', 900))).toBe('last off: 900 ms');
  });

  it('timelines chart draws the run whose time to detect is the median', () => {
    // Sorted by the request's end, the median would be the run detected at 50 ms.
    const runs = [record('on', 100, 50), record('on', 200, 10), record('on', 300, 30)];
    const events = new Map<RunRecord, readonly TimelineEvent[]>(runs.map((r, i) => [r, [{ t: i } as unknown as TimelineEvent]]));
    expect(medianExamples(runs, events).on).toEqual([{ t: 2 }]);
  });
});

describe("a detection workload's decode time per round", () => {
  const withRounds = (mode: 'on' | 'off', ...generationMs: number[]): RunRecord => ({
    ...record(mode, 900, 100),
    rounds: generationMs.map((g) => ({ generationMs: g, toolMs: 0 }) as unknown as RoundSummary),
  });

  it('averages each round over the sequential runs that reached it, not counting a missing round as 0 ms', () => {
    const runs = [withRounds('off', 100, 200), withRounds('off', 300), withRounds('on', 5, 5, 5)];
    expect(detectionGenerationMs(runs)).toEqual([200, 200]);
  });

  it('has as many rounds as the longest sequential run, whatever the partial runs took', () => {
    expect(detectionGenerationMs([withRounds('off', 10), withRounds('on', 1, 2, 3)])).toEqual([10]);
  });
});
