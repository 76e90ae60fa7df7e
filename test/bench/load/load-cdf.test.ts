import { describe, expect, it } from 'vitest';
import { latencyCdf } from '../../../bench/load/load-cdf.ts';
import type { LoadRecord, PhaseRun } from '../../../bench/load/run-phase.ts';

const record = (mode: 'on' | 'off', latencyMs: number, error?: string): LoadRecord =>
  ({ index: 0, mode, atMs: 0, lateMs: 0, latencyMs, ttftMs: 1, doneAtMs: latencyMs, rounds: [], contentHash: '', ...(error ? { error } : {}) }) as LoadRecord;

const phase = (ratePerS: number, records: LoadRecord[]): PhaseRun => ({ ratePerS, records }) as unknown as PhaseRun;

// Failed requests are left out of the CDF; only the table's done / sent column showed them, so a
// series missing a third of its requests looked as whole as the others on the chart.
describe('the load latency CDF', () => {
  const offFailing = [record('off', 300), record('off', NaN, 'ECONNRESET'), record('off', 100), record('on', 50)];

  it("says in a series' legend how many of its requests failed, and in the title that they are not drawn", () => {
    const { series, svg } = latencyCdf([phase(1.6, offFailing), phase(0.45, [...offFailing, ...Array.from({ length: 47 }, () => record('on', 1, 'timeout'))])]);
    expect(series.map((s) => s.label)).toEqual(['1.6 req/s, off (1 of 3 failed)', '1.6 req/s, on', '0.45 req/s, off (1 of 3 failed)', '0.45 req/s, on (47 of 48 failed)']);
    expect(series[0]!.values).toEqual([100, 300]);
    expect(series.map((s) => s.failed)).toEqual([1, 0, 1, 47]);
    // The legend shows the count itself, not cut off behind an ellipsis.
    for (const s of series) expect(svg).toContain(`</title>${s.label}</text>`);
    expect(svg).toContain('failed requests not drawn');
  });

  it('says nothing of failures where none failed', () => {
    const { series, svg } = latencyCdf([phase(1.2, [record('off', 1), record('on', 2)])]);
    expect(series.map((s) => s.label)).toEqual(['1.2 req/s, off', '1.2 req/s, on']);
    expect(svg).not.toContain('failed');
  });
});
