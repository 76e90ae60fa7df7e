import { describe, expect, it } from 'vitest';
import type { RoundSummary } from '../../gateway/timeline.ts';
import { markdownReport, type BenchMeta } from '../../bench/report.ts';
import { roundFigures, type RunRecord, type WorkloadReport } from '../../bench/run-ab.ts';
import { summarize } from '../../bench/stats.ts';

/** A run whose rounds took these decode and tool times (the last round: the answer, no tool). */
const run = (mode: 'on' | 'off', rounds: Array<[g: number, t: number]>): RunRecord => ({
  mode,
  totalMs: 0,
  ttftMs: 1,
  rounds: rounds.map(([generationMs, toolMs], i): RoundSummary => ({ round: i + 1, generationMs, toolMs, toolWaitAfterDecodeMs: 0 })),
  failedCalls: 0,
});

const twoRounds = [run('off', [[100, 50], [30, 0]]), run('on', [[100, 70], [30, 0]]), run('off', [[100, 50], [30, 0]]), run('on', [[100, 70], [30, 0]])];

// A real model (bench --upstream) takes another round now and then.
describe('g_i, t_i and the bound of runs that differ in their number of rounds', () => {
  it('are those of the typical runs: the odd run is left out, not averaged in with zeros (regression: g_2 read 3 rounds as 2)', () => {
    const figures = roundFigures([...twoRounds, run('off', [[100, 50], [40, 60], [30, 0]])]);
    expect(figures).toEqual({
      generationMs: [100, 30],
      toolMs: [50],
      boundMs: 130,
      sequentialIdealMs: 180,
      otherShapes: 1,
      boundRuns: { used: 4, leftOut: 1, why: 'took another number of rounds than 2, the number most sequential runs took' },
    });
  });

  it('leave nothing out when every run took the same rounds', () => {
    expect(roundFigures(twoRounds)).toEqual({ generationMs: [100, 30], toolMs: [50], boundMs: 130, sequentialIdealMs: 180, otherShapes: 0, boundRuns: { used: 4, leftOut: 0, why: null } });
  });

  it('take the longer shape of two as frequent among the sequential runs', () => {
    const figures = roundFigures([run('off', [[100, 50], [30, 0]]), run('off', [[100, 50], [40, 60], [30, 0]]), run('on', [[100, 70], [30, 0]])]);
    expect(figures.generationMs).toEqual([100, 40, 30]);
    expect(figures.toolMs).toEqual([50, 60]);
    expect(figures.otherShapes).toBe(2);
    expect(figures.boundRuns).toEqual({ used: 1, leftOut: 2, why: 'took another number of rounds than 3, the number most sequential runs took' });
  });
});

describe('the report of such a workload', () => {
  it('says how many runs took another number of rounds, and what they were left out of', () => {
    const records = [...twoRounds, run('off', [[100, 50], [40, 60], [30, 0]])];
    const report: WorkloadReport = {
      workload: 'codegen',
      description: '',
      runs: 1,
      on: summarize([130]),
      off: summarize([180]),
      improvementPct: 27.8,
      ...roundFigures(records),
      boundAchieved: 1,
      metric: 'latency',
      failedCalls: 0,
      records,
      examples: { on: [], off: [] },
    };
    const meta = { command: 'bench', date: '', node: '', profile: '', toolProfile: { name: 'paper', description: '' }, upstream: '', pairs: '', workloads: '', python: 'not used', search: 'not used', sandbox: {} } as unknown as BenchMeta;
    const markdown = markdownReport({ origin: { command: 'bench', commit: 'abc1234', cpus: '2', loadavg: [1, 1, 1] }, meta, reports: [report], sections: [], wallS: 1 });
    // Per mode, as the table's runs column counts: "1 of 5 runs" counted both modes' runs together.
    expect(markdown).toContain('**Note: codegen: 1 of 3 off runs and 0 of 2 on runs took another number of rounds than 2**: g_i, t_i and the bound are from the others');
  });
});
