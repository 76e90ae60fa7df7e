import { describe, expect, it } from 'vitest';
import type { SectionResult } from '../../bench/extra-sections.ts';
import { markdownReport, type BenchMeta } from '../../bench/report.ts';
import type { WorkloadReport } from '../../bench/run-ab.ts';

const origin = { command: 'npm run bench -- sweep overhead', commit: 'abc1234', cpus: '2 × test', loadavg: [1, 1, 1] };

const summary = { n: 20, missing: 0, mean: 100, std: 10, p50: 100, p99: 110, min: 90, max: 110 };
const meta = {
  ...origin,
  date: '2026-12-01',
  node: 'v20',
  profile: 'test',
  toolProfile: { name: 'local', description: 'test' },
  upstream: 'simulator',
  pairs: 'alternating',
  workloads: 'all at once',
  python: 'not used',
  search: 'not used',
  sandbox: {},
} as unknown as BenchMeta;

function workload(name: string, improvementPct: number): WorkloadReport {
  return {
    workload: name,
    description: name,
    runs: 20,
    on: summary,
    off: summary,
    improvementPct,
    generationMs: [50, 50],
    toolMs: [2],
    boundMs: 100,
    sequentialIdealMs: 102,
    boundAchieved: 0.9995,
    metric: 'latency',
    failedCalls: 0,
    boundRuns: { used: 40, leftOut: 0, why: null },
    records: [],
    examples: { on: [], off: [] },
  };
}

function section(name: SectionResult['name'], markdown: string): SectionResult {
  return { name, markdown, json: {}, wallS: 1 };
}

describe('markdownReport', () => {
  it("has one title: each section's own headings sit one level below it", () => {
    const markdown = markdownReport({
      origin,
      reports: [],
      sections: [section('sweep', '# t/g sweep\n\ntext with a # inside\n\n## Points'), section('overhead', '# Gateway overhead\n\n###### deepest')],
      wallS: 2,
    });
    const headings = markdown.split('\n').filter((line) => /^#+ /.test(line));
    expect(headings).toEqual([expect.stringMatching(/^# Conveyor benchmark — /), '## t/g sweep', '### Points', '## Gateway overhead', '###### deepest']);
    expect(markdown).toContain('text with a # inside');
  });

  // 2026-11-30-all.md printed "Calculator −0.0%": a loss the run never showed at that precision.
  it('prints an improvement that rounds to zero as 0.0%, never -0.0%', () => {
    const markdown = markdownReport({ origin, meta, reports: [workload('calculator', -0.04), workload('database', -0.06), workload('codegen', 33.33)], sections: [], wallS: 2 });
    const improvement = (name: string) => markdown.split('\n').find((l) => l.startsWith(`| ${name} |`))!.split(' | ')[6];
    expect(['calculator', 'database', 'codegen'].map(improvement)).toEqual(['0.0%', '-0.1%', '33.3%']);
    expect(markdown).not.toContain('-0.0%');
  });

  // The warm-up pair each workload sends first is in no figure (off, on, g_i, t_i, the bound):
  // the README said so, the report did not, and a reader counting requests found two too many.
  it('says how many warm-up pairs each workload ran, left out of every figure', () => {
    const run = (warmupPairs: number) => markdownReport({ origin, meta: { ...meta, warmupPairs }, reports: [workload('codegen', 30)], sections: [], wallS: 2 });
    expect(run(1)).toContain('Left out of every figure: 1 warm-up pair per workload, sent before the measured runs (JIT, sockets, first tool starts).');
    expect(run(2)).toContain('Left out of every figure: 2 warm-up pairs per workload,');
    expect(run(0)).not.toContain('warm-up pair');
  });
});
