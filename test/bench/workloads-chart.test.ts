import { describe, expect, it } from 'vitest';
import type { WorkloadReport } from '../../bench/run-ab.ts';
import { workloadsChart } from '../../bench/workloads-chart.ts';

const summary = { n: 2, missing: 0, mean: 100, std: 10, p50: 100, p99: 110, min: 90, max: 110 };

function report(workload: string, metric: WorkloadReport['metric']): WorkloadReport {
  return {
    workload,
    description: workload,
    runs: 2,
    on: summary,
    off: summary,
    improvementPct: 0,
    generationMs: [50, 50],
    toolMs: [10],
    boundMs: 100,
    sequentialIdealMs: 110,
    boundAchieved: 1,
    metric,
    failedCalls: 0,
    boundRuns: { used: 40, leftOut: 0, why: null },
    records: [],
    examples: { on: [], off: [] },
  };
}

const title = (svg: string) => /<text[^>]*>(Latency per workload[^<]*)<\/text>/.exec(svg)?.[1];

describe('the workloads bar chart', () => {
  it('says which bars are a time to detect only when such a workload ran', () => {
    expect(title(workloadsChart([report('calculator', 'latency')]))).toBe('Latency per workload, partial execution off vs on');
    expect(title(workloadsChart([report('codegen', 'latency'), report('validation', 'detection')]))).toBe(
      'Latency per workload, partial execution off vs on (validation: time to detect)',
    );
  });
});
