import { describe, expect, it } from 'vitest';
import { toolResultsMarkdown, type TargetTimings } from '../../../bench/tool-results/tool-results-report.ts';

const timing = (roundEnd: number, answerEnd = 2800) => ({ results: [900, 500, 1300], roundEnd, answerEnd });
const report = (targets: TargetTimings[]) => toolResultsMarkdown({ command: 'npx tsx bench/tool-results/run.ts', date: '2026-12-01', profile: 'fast-test', runs: 2, targets });
const row = (markdown: string, label: string) => markdown.split('\n').find((l) => l.startsWith(`| ${label} |`))!;

describe('the tool-results bench report', () => {
  it('gives each column mean / p50, results in the order they arrived', () => {
    const markdown = report([{ label: 'on', timings: [timing(1400), timing(1380)] }]);
    expect(row(markdown, 'on')).toBe('| on | 500 / 500 | 900 / 900 | 1300 / 1300 | 1390 / 1380 | 2800 / 2800 |');
  });

  // A gateway that never sent round 1's round.finished left NaN in the timings, and the table said
  // "NaN / NaN" (or, with one request of two missing it, a NaN mean beside a p50 from an unsorted list).
  it('says n/a, and why under the table, where round.finished never arrived', () => {
    const markdown = report([
      { label: 'old', timings: [timing(NaN), timing(NaN)] },
      { label: 'half', timings: [timing(1400), timing(NaN)] },
    ]);
    expect(markdown).not.toMatch(/NaN|Infinity|undefined/);
    expect(row(markdown, 'old')).toBe('| old | 500 / 500 | 900 / 900 | 1300 / 1300 | n/a* | 2800 / 2800 |');
    expect(row(markdown, 'half')).toBe('| half | 500 / 500 | 900 / 900 | 1300 / 1300 | 1400 / 1400* | 2800 / 2800 |');
    const notes = markdown.split('\n').filter((l) => l.startsWith('\\*'));
    expect(notes).toEqual([
      "\\* old: round 1's `round.finished` never reached the client in 2 of 2 requests: no figure.",
      "\\* half: round 1's `round.finished` never reached the client in 1 of 2 requests: the figure is from the other 1.",
    ]);
  });

  it('says so for a [DONE] that never arrived too', () => {
    const markdown = report([{ label: 'cut', timings: [timing(1400, NaN), timing(1400, NaN)] }]);
    expect(row(markdown, 'cut')).toBe('| cut | 500 / 500 | 900 / 900 | 1300 / 1300 | 1400 / 1400 | n/a* |');
    expect(markdown).toContain('\\* cut: `[DONE]` never reached the client in 2 of 2 requests: no figure.');
  });

  // Every other report opens with its title, then the command: this one had the command above it.
  it('opens with its title, the command under it, as the other reports do', () => {
    const lines = report([{ label: 'on', timings: [timing(1400)] }]).split('\n');
    expect(lines[0]).toBe('# When tool results reach a streaming client — 2026-12-01');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/tool-results/run.ts`  ');
    expect(lines[3]).toMatch(/^Search workload/);
  });
});
