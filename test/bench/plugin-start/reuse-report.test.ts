import { describe, expect, it } from 'vitest';
import { processReuseMarkdown, type ProcessReuseReport, type ReuseRow } from '../../../bench/plugin-start/reuse-report.ts';
import { summarize } from '../../../bench/stats.ts';

const row = (mode: string, pattern: string, ms: number[]): ReuseRow => ({ mode, pattern, ms: summarize(ms) });
const report = (rows: ReuseRow[]): string =>
  processReuseMarkdown({
    command: 'npx tsx bench/plugin-start/reuse.ts --runs 2',
    at: '2026-12-01T20:00:00.000Z',
    node: 'v20.19.0',
    cpus: '2 × test',
    sandbox: 'bwrap',
    runs: 2,
    calls: 4,
    modes: ['reused', 'fresh per call'],
    rows,
  });

describe('the process-reuse report', () => {
  it('gives the reused mean as a multiple of the fresh one', () => {
    const markdown = report([row('reused', 'sequential', [2, 2]), row('fresh per call', 'sequential', [4, 4]), row('reused', 'pairs', [3, 3]), row('fresh per call', 'pairs', [300, 300])]);
    expect(markdown).toContain('| reused | sequential | 2.00 | 2.00 | 2.00 |');
    expect(markdown).toContain('| fresh per call | pairs | 300 | 300 | 300 |');
    expect(markdown).toContain('- sequential: a reused process answers in 0.500× the mean time of a fresh process per call.');
    expect(markdown).toContain('- pairs: a reused process answers in 0.010× the mean time of a fresh process per call.');
  });

  // reuse.ts formatted with toFixed directly: a row with no calls timed (summarize() of none)
  // printed "NaN" in the table and "NaN×" in the ratio.
  it('prints "–" for a time or a ratio it does not have, never NaN or Infinity', () => {
    const markdown = report([row('reused', 'sequential', []), row('fresh per call', 'sequential', [4, 4]), row('reused', 'pairs', [3, 3]), row('fresh per call', 'pairs', [0, 0])]);
    expect(markdown).not.toMatch(/NaN|Infinity/);
    expect(markdown).toContain('| reused | sequential | – | – | – |');
    expect(markdown).toContain('- sequential: a reused process answers in – the mean time of a fresh process per call.');
    expect(markdown).toContain('- pairs: a reused process answers in – the mean time of a fresh process per call.');
  });

  // As every other report: the title first, the command under it (it stood above the title).
  it('opens with its title, the command under it', () => {
    const lines = report([]).split('\n');
    expect(lines[0]).toBe('# Process reuse (calculator) — 2026-12-01T20:00:00.000Z');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/plugin-start/reuse.ts --runs 2`  ');
    expect(lines[3]).toMatch(/^Node v20\.19\.0; 2 × test;/);
  });
});
