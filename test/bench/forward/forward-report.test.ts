import { describe, expect, it } from 'vitest';
import { forwardMarkdown, type ForwardRow } from '../../../bench/forward/forward-report.ts';

const row = (target: ForwardRow['target'], ttftP50Ms: number): ForwardRow => ({
  concurrency: 100,
  target,
  streams: 40,
  ttftP50Ms,
  ttftP99Ms: ttftP50Ms + 5,
  ttftMissing: 0,
  gatewayCpuPer1kTokens: [40, 45],
  simCpuPer1kTokens: [20, 21],
});
const report = (rows: ForwardRow[]) =>
  forwardMarkdown({ command: 'npx tsx bench/forward/run.ts', date: '2026-12-01', node: 'v20', cpus: '2 × test', tokens: 200, rounds: 3, phaseMs: 8000, rows });
const addedCells = (markdown: string) =>
  markdown
    .split('\n')
    .filter((l) => /^\| 100 \| (completions, forwarded|chat, through the gateway) \|/.test(l))
    .map((l) => l.split(' | ')[4]);

describe('the forward bench report', () => {
  // The overhead report and the README write added latency with its sign (+1.18 ms, −0.40 ms);
  // this table printed 7.89 for a gateway that cost time, unlike every other "added" column.
  it('signs the added TTFT both ways, as the overhead report does', () => {
    const markdown = report([row('completions, direct', 10), row('completions, forwarded', 17.89), row('chat, through the gateway', 9.5)]);
    expect(addedCells(markdown)).toEqual(['+7.89', '-0.50']);
  });

  it('prints an added TTFT that rounds to zero without a sign, never -0.00', () => {
    const markdown = report([row('completions, direct', 10), row('completions, forwarded', 9.999), row('chat, through the gateway', 10.001)]);
    expect(addedCells(markdown)).toEqual(['0.00', '0.00']);
  });

  // stream() leaves a TTFT NaN when no read held a token's text, and a phase of no events divides
  // its CPU by zero: the table printed "NaN / NaN" and "Infinity–Infinity".
  it('prints "–" for a figure it does not have, never NaN or Infinity', () => {
    const broken = { ...row('completions, forwarded', NaN), ttftP99Ms: NaN, gatewayCpuPer1kTokens: [40, Infinity], simCpuPer1kTokens: [NaN, 20] };
    const markdown = report([row('completions, direct', 10), broken]);
    expect(markdown).not.toMatch(/NaN|Infinity/);
    const cells = markdown.split('\n').find((l) => l.startsWith('| 100 | completions, forwarded |'))!.split(' | ');
    expect(cells.slice(3)).toEqual(['– / –', '–', '–', '– |']);
  });

  // summarize() leaves out a stream that never saw a token's text (its TTFT is NaN); the report
  // says how many of the row's streams that was, rather than a p50 that looks like all of them.
  it('stars a TTFT that some streams lacked and says how many', () => {
    const short = { ...row('completions, forwarded', 17.89), ttftMissing: 3 };
    const markdown = report([row('completions, direct', 10), short]);
    const cells = markdown.split('\n').find((l) => l.startsWith('| 100 | completions, forwarded |'))!.split(' | ');
    expect(cells[3]).toBe('17.89 / 22.89*');
    expect(markdown).toContain('\\* 100 streams, completions, forwarded: 3 of 40 streams had no token text; their TTFT is left out (the figures are from the other 37).');
    expect(markdown.split('\n').find((l) => l.startsWith('| 100 | completions, direct |'))).not.toContain('*');
  });
  // run.ts waited for the gateway alone, before the warm-up, and kept no word of whether it had
  // settled: a server still busy was charged to the first level's CPU per token with nothing said.
  it('names a server that had not settled when a level began, and says nothing when all had', () => {
    const rows = [row('completions, direct', 10), row('completions, forwarded', 11), row('chat, through the gateway', 12)];
    const busy = forwardMarkdown({ command: 'x', date: '2026-12-01', node: 'v20', cpus: '2 × test', tokens: 200, rounds: 3, phaseMs: 8000, rows, unsettled: [{ concurrency: 100, server: 'sim' }] });
    expect(busy).toContain('**sim had not settled when the 100-stream level began**');
    expect(report(rows)).not.toContain('had not settled');
  });
});
