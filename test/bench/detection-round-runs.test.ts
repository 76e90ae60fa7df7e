import { describe, expect, it } from 'vitest';
import type { RoundSummary } from '../../gateway/timeline.ts';
import { detectionRoundRuns, type RunRecord, type WorkloadReport } from '../../bench/run-ab.ts';
import { markdownReport } from '../../bench/report.ts';

const run = (mode: 'on' | 'off', ...generationMs: number[]): RunRecord => ({
  mode,
  totalMs: 900,
  ttftMs: 1,
  rounds: generationMs.map((g) => ({ generationMs: g, toolMs: 0 }) as unknown as RoundSummary),
  failedCalls: 0,
  detection: { detectedMs: 100, boundMs: 10 },
});

// Each round's g_i averages only the sequential runs that reached it; the report did not say how
// many that was, so a later round's figure from one run of twenty read as one from all twenty.
describe("a detection workload's g_i per round", () => {
  it('names each round fewer than all sequential runs reached, as boundRuns names left-out runs', () => {
    const runs = [run('off', 100, 200, 300), run('off', 100, 200), run('off', 100), run('on', 5, 5, 5, 5)];
    expect(detectionRoundRuns(runs)).toEqual([
      { round: 2, used: 2, leftOut: 1, why: 'ended before round 2' },
      { round: 3, used: 1, leftOut: 2, why: 'ended before round 3' },
    ]);
  });

  it('names none where every sequential run reached every round', () => {
    expect(detectionRoundRuns([run('off', 1, 2), run('off', 3, 4), run('on', 1)])).toEqual([]);
  });

  it('says so in the report', () => {
    const summary = { n: 3, missing: 0, mean: 100, std: 10, p50: 100, p99: 110, min: 90, max: 110 };
    const report: WorkloadReport = {
      workload: 'validation',
      description: 'validation',
      runs: 3,
      on: summary,
      off: summary,
      improvementPct: 50,
      generationMs: [100, 200, 300],
      toolMs: [],
      boundMs: 10,
      sequentialIdealMs: 100,
      boundAchieved: 1,
      metric: 'detection',
      failedCalls: 0,
      boundRuns: { used: 3, leftOut: 0, why: null },
      generationRuns: [
        { round: 2, used: 2, leftOut: 1, why: 'ended before round 2' },
        { round: 3, used: 1, leftOut: 2, why: 'ended before round 3' },
      ],
      records: [],
      examples: { on: [], off: [] },
    };
    const meta = { date: '2026-12-01', node: 'v20', profile: 't', toolProfile: { name: 'local', description: 't' }, upstream: 's', pairs: 'a', workloads: 'w', warmupPairs: 1 };
    const markdown = markdownReport({
      origin: { command: 'npm run bench -- validation', commit: 'abc', cpus: '2 × test', loadavg: [1, 1, 1] },
      meta: meta as never,
      reports: [report],
      sections: [],
      wallS: 1,
    } as never);
    expect(markdown).toContain('**Note: validation: g_i of round 2 is the mean of 2 of 3 sequential runs, round 3 of 1 of 3**');
  });
});
