import { describe, expect, it } from 'vitest';
import { pluginStartMarkdown, type PluginStartReport, type StartRow } from '../../../bench/plugin-start/plugin-start-report.ts';
import { summarize } from '../../../bench/stats.ts';

const row = (loader: StartRow['loader'], wall: number[], cpu: number[]): StartRow => ({ plugin: 'word_count', loader, wallMs: summarize(wall), cpuMs: summarize(cpu) });
const report = (over: Partial<PluginStartReport>): string =>
  pluginStartMarkdown({
    command: 'npx tsx bench/plugin-start/run.ts --runs 2',
    at: '2026-12-01T20:00:00.000Z',
    node: 'v22.18.0',
    cpus: '2 × test',
    runs: 2,
    loaders: ['tsx', 'type stripping'],
    plugins: ['word_count'],
    rows: [row('tsx', [600, 640], [500, 520]), row('type stripping', [300, 320], [250, 260])],
    sandbox: 'bwrap',
    coldRows: [
      { loader: 'tsx', ms: summarize([570, 580]) },
      { loader: 'type stripping', ms: summarize([240, 250]) },
    ],
    ...over,
  });

describe('the plugin-start report', () => {
  it('gives type stripping as a multiple of tsx, p50 over p50', () => {
    const markdown = report({});
    expect(markdown).toContain('- word_count: type stripping takes 0.50× the wall time and 0.50× the CPU of tsx (p50).');
    expect(markdown).toContain('- Type stripping takes 0.42× the time of tsx (p50).');
  });

  // processCpuMs is NaN where /proc cannot say, and summarize() of no values has no p50: the
  // ratios printed "NaN×" (and a 0 ms p50 "Infinity×"), the tables "NaN / NaN".
  it('prints "–" for a ratio or a time it does not have, never NaN or Infinity', () => {
    const markdown = report({
      rows: [row('tsx', [600, 640], [NaN, NaN]), row('type stripping', [300, 320], [0, 0])],
      coldRows: [
        { loader: 'tsx', ms: summarize([]) },
        { loader: 'type stripping', ms: summarize([]) },
      ],
    });
    expect(markdown).not.toMatch(/NaN|Infinity/);
    expect(markdown).toContain('- word_count: type stripping takes 0.50× the wall time and – the CPU of tsx (p50).');
    expect(markdown).toContain('| word_count | tsx | 600 / 640 | – / – |');
    expect(markdown).toContain('| tsx | – / – |');
    expect(markdown).toContain('- Type stripping takes – the time of tsx (p50).');
  });

  // As every other report: the title first, the command under it (it stood above the title).
  it('opens with its title, the command under it', () => {
    const lines = report({}).split('\n');
    expect(lines[0]).toBe('# JS plugin process start-up — 2026-12-01T20:00:00.000Z');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/plugin-start/run.ts --runs 2`  ');
    expect(lines[3]).toMatch(/^Node v22\.18\.0; 2 × test;/);
  });
});
