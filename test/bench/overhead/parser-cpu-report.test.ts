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
