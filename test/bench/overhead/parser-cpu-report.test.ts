import { describe, expect, it } from 'vitest';
import type { ParserCpuJson } from '../../../bench/overhead/parser-cpu.ts';
import { parserCpuMarkdown } from '../../../bench/overhead/parser-cpu-report.ts';
import { summarize } from '../../../bench/stats.ts';

const json: ParserCpuJson = {
  meta: { date: '2026-12-01', node: 'v20', cpus: '2 × test', workload: 'save_report', profile: 'test' },
  requestsPerRound: 40,
  concurrency: 20,
  perRequestUs: { parse: summarize([9000, 9200]), none: summarize([8000, 8100]) },
  rounds: [],
  differenceUs: { mean: 1050, standardError: 100 },
  pairsLeftOut: 0,
  shareOfGatewayCpuPct: 11.5,
  extraOverPassThroughPct: 13,
  checks: { parse: { requests: 80, ok: 80, errors: [] }, none: { requests: 80, ok: 80, errors: [] } },
};

describe('the parser-cpu report', () => {
  // bench/overhead/run.ts --parser-cpu put "Command:" above the title, unlike every other report.
  it('opens with its title, the command under it', () => {
    const lines = parserCpuMarkdown(json, 'npx tsx bench/overhead/run.ts --parser-cpu').split('\n');
    expect(lines[0]).toBe('# Parser CPU overhead — 2026-12-01');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/overhead/run.ts --parser-cpu`  ');
    expect(lines[3]).toMatch(/^Node v20; 2 × test\./);
  });

  it('has no command line when given none (a section of `npm run bench`)', () => {
    const markdown = parserCpuMarkdown(json);
    expect(markdown.split('\n')[2]).toMatch(/^Node v20;/);
    expect(markdown).toContain('Parsing and dispatch cost **1050 ± 100 µs per request**');
  });
});

describe('the parser-cpu report on a difference that rounds to none', () => {
  // (-0.3).toFixed(0) is "-0": it read as parsing saving CPU.
  it('prints 0, not -0', () => {
    const markdown = parserCpuMarkdown({ ...json, differenceUs: { mean: -0.3, standardError: 0.2 } });
    expect(markdown).toContain('Parsing and dispatch cost **0 ± 0 µs per request**');
  });
});

describe('the parser-cpu report with --baseline', () => {
  const withBaseline: ParserCpuJson = {
    ...json,
    baseline: { ...json, label: 'HEAD~3', commit: 'abc1234', perRequestUs: { parse: summarize([9800, 10000]), none: summarize([8000, 8100]) }, differenceUs: { mean: 1850, standardError: 120 } },
    ratio: { pairs: 2, parse: 0.917, none: 1, difference: 0.5676 },
  };

  it("gives the baseline's rows under this tree's and the ratio of their CPU per request", () => {
    const markdown = parserCpuMarkdown(withBaseline);
    expect(markdown).toContain('| baseline `HEAD~3` (abc1234), parse | 9900 ± 141 | 9800 | 80/80 |');
    expect(markdown).toContain('| baseline `HEAD~3` (abc1234), pass-through | 8050 ± 71 | 8000 | 80/80 |');
    expect(markdown).toContain("this tree's CPU per request is **0.92×** the baseline's parsed, 1.00× in pass-through, and its parsing cost 0.57×");
    expect(markdown).toContain('over the 2 pairs of rounds where both gateways had every figure');
  });

  it('says nothing of a baseline when run without one', () => {
    expect(parserCpuMarkdown(json)).not.toMatch(/baseline/i);
  });
});
