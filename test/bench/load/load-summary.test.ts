import { describe, expect, it } from 'vitest';
import { summarizePhase } from '../../../bench/load/load-summary.ts';
import type { LoadRecord, PhaseRun } from '../../../bench/load/run-phase.ts';

const counters = { steps: 0, tokensGenerated: 0, requestsFinished: 0, running: 0, waiting: 0, maxBatchOccupancy: 0, meanBatchOccupancy: 0, busyMs: 0, scheduleSlips: 0 };

function record(index: number, latencyMs: number, ttftMs: number, g1Ms?: number): LoadRecord {
  const rounds = g1Ms === undefined ? [] : [{ round: 1, generationMs: g1Ms, toolMs: 300, toolWaitAfterDecodeMs: 10 }];
  return { index, mode: 'on', atMs: index * 100, lateMs: 0, latencyMs, ttftMs, doneAtMs: index * 100 + latencyMs, rounds, contentHash: 'x' };
}

describe('a load phase summary', () => {
  // A completed request whose timeline came back without rounds (`rounds ?? []`) gave NaN to the
  // phase's own mean, which summed it in: that one request took g₁, t and the tool wait of every
  // other request with it, and the table printed "–". A stream with no content token has a NaN TTFT,
  // which broke the sort of the TTFTs (NaN compares as neither less nor more) and so their p50.
  it("leaves a figure one request lacks out of the others' figures, as summarize() does", () => {
    const run: PhaseRun = {
      ratePerS: 1,
      durationS: 1,
      records: [record(0, 900, 50, 400), record(1, 1000, NaN, 600), record(2, 1100, 10), record(3, 1200, 30, 500)],
      spanMs: 2000,
      before: counters,
      after: counters,
      samples: [],
    };
    const on = summarizePhase(run).on;
    expect(on.completed).toBe(4);
    expect(on.g1Ms).toBe(500);
    expect(on.toolMs).toBe(300);
    expect(on.toolWaitAfterDecodeMs).toBe(10);
    expect(on.ttftP50Ms).toBe(30);
  });
});
