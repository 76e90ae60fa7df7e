import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { medianExamples, type RunRecord } from '../../bench/run-ab.ts';
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
