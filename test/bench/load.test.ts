import { describe, expect, it } from 'vitest';
import { arrivalSchedule } from '../../bench/load/arrival-schedule.ts';
import { completionRate, percentile } from '../../bench/load/load-summary.ts';
import { runLoad } from '../../bench/load/run-load.ts';

describe('load arrivals', () => {
  it('replays the same arrivals for the same seed and different ones for another seed', () => {
    const a = arrivalSchedule({ ratePerS: 1.5, durationS: 20, seed: 7 });
    expect(arrivalSchedule({ ratePerS: 1.5, durationS: 20, seed: 7 })).toEqual(a);
    expect(arrivalSchedule({ ratePerS: 1.5, durationS: 20, seed: 8 })).not.toEqual(a);
  });

  it('offers exactly rate × duration requests, in order, inside the phase', () => {
    const a = arrivalSchedule({ ratePerS: 1.5, durationS: 20, seed: 3 });
    expect(a).toHaveLength(30);
    expect(a.map((x) => x.index)).toEqual([...Array(30).keys()]);
    for (const [i, x] of a.entries()) {
      expect(x.atMs).toBeGreaterThan(i === 0 ? 0 : a[i - 1]!.atMs);
      expect(x.atMs).toBeLessThan(20_000);
    }
  });

  it('gives every consecutive pair one on and one off request, in both orders across the run', () => {
    const a = arrivalSchedule({ ratePerS: 2, durationS: 30, seed: 11 });
    const pairs = Array.from({ length: a.length / 2 }, (_, i) => `${a[2 * i]!.mode}-${a[2 * i + 1]!.mode}`);
    expect(new Set(pairs)).toEqual(new Set(['on-off', 'off-on']));
  });
});

describe('load statistics', () => {
  it('takes nearest-rank percentiles and the completion rate between first and last completion', () => {
    const sorted = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    expect([percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99)]).toEqual([50, 90, 100]);
    expect(completionRate([1000, 2000, 3000])).toBe(1);
    expect(completionRate([1000])).toBeNaN();
  });
});

describe('runLoad', () => {
  it('runs a tiny load through the gateway and the batching sim, and every request completes with its tool round', async () => {
    const progress: Array<[number, number]> = [];
    const result = await runLoad({ quick: true, rates: [4], durationS: 1, command: 'test', onProgress: (d, t) => progress.push([d, t]) });
    const json = result.json as {
      phases: Array<{
        ratePerS: number;
        meanBatch: number;
        maxBatchSampled: number;
        on: { sent: number; completed: number; failed: number; latencyMs: Record<string, number> };
        off: { sent: number; completed: number; failed: number; latencyMs: Record<string, number> };
      }>;
      cdf: Array<{ label: string; values: number[] }>;
      runs: Array<{ records: Array<{ mode: string; error?: string; latencyMs: number; rounds: unknown[]; contentHash: string }> }>;
    };
    expect(json.phases).toHaveLength(1);
    const phase = json.phases[0]!;
    expect(phase.ratePerS).toBe(4);
    for (const mode of [phase.on, phase.off]) {
      expect(mode).toMatchObject({ sent: 2, completed: 2, failed: 0 });
      expect(Object.keys(mode.latencyMs).sort()).toEqual(['max', 'mean', 'p50', 'p90', 'p99']);
    }
    // Four requests shared the engine: it saw a batch, and every request went model → python → model.
    expect(phase.meanBatch).toBeGreaterThan(0);
    const records = json.runs[0]!.records;
    expect(records.map((r) => r.error)).toEqual([undefined, undefined, undefined, undefined]);
    expect(records.map((r) => r.rounds.length)).toEqual([2, 2, 2, 2]);
    // Partial execution changes timing only: under concurrency too, on and off answer alike.
    expect(new Set(records.map((r) => r.contentHash)).size).toBe(1);
    expect(json.cdf.map((s) => [s.label, s.values.length])).toEqual([
      ['4 req/s, off', 2],
      ['4 req/s, on', 2],
    ]);
    expect(progress[0]).toEqual([0, 4]);
    expect(progress.at(-1)).toEqual([4, 4]);
    expect(result.markdown).toContain('| rate (req/s) | mode |');
    expect(result.markdown).toContain('Command: `test`');
    expect(result.svg.trimStart().startsWith('<svg')).toBe(true);
  });
});
