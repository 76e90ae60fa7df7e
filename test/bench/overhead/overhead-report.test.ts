import { describe, expect, it } from 'vitest';
import { overheadMarkdown } from '../../../bench/overhead/overhead-report.ts';
import type { OverheadJson, TargetStats } from '../../../bench/overhead/run-overhead.ts';

const summary = (p50: number) => ({ n: 100, missing: 0, mean: p50, std: 1, p50, p99: p50 + 10, min: p50, max: p50 + 10 });
const stats = (ttftP50: number): TargetStats => ({
  streams: 100,
  errors: [],
  shortStreams: 0,
  ttftMs: summary(ttftP50),
  itlMs: summary(6),
  tokens: 20000,
  cpuMs: 800,
  cpuMsPer1kTokens: 40,
  simCpuMsPer1kTokens: 20,
  wallMs: 8000,
});

const json: OverheadJson = {
  meta: { date: '2026-12-01', node: 'v20', cpus: '2 × test', loadavg: [1, 1, 1], profile: 'test', streamTokens: 200, portkey: { error: 'not installed' } },
  levels: [
    {
      concurrency: 100,
      rounds: 3,
      streamsPerRound: 100,
      targets: { direct: stats(20), conveyor: stats(20.003) },
      // Differences of two p50s: a gateway a few µs slower or faster than direct.
      added: { conveyor: { ttftP50Ms: -0.004, ttftP99Ms: 1.5, itlP50Ms: 0.004, itlP99Ms: -0.3 } },
    },
  ],
  target: { concurrency: 100, conveyorAddedTtftP50Ms: -0.004, under1ms: true, belowPortkey: null },
};

describe('the overhead report', () => {
  it('signs the added latencies as the forward report does: +, -, and 0.00 unsigned where it rounds to nothing', () => {
    const row = overheadMarkdown(json).split('\n').find((l) => l.startsWith('| 100 | conveyor |'))!;
    expect(row.split(' | ').slice(4, 6)).toEqual(['0.00 / +1.50', '0.00 / -0.30']);
    expect(row).not.toContain('-0.00');
  });
});

describe('the overhead report, streams without a TTFT', () => {
  // timedChatStream leaves a stream's TTFT NaN when no content token came; summarize() leaves it
  // out of p50/p99 and counts it in `missing`, which only the JSON showed: the table's figures
  // looked like every stream's.
  it('stars a TTFT that some streams lacked and says how many, as the forward report does', () => {
    const lacking = { ...stats(20.003), ttftMs: { ...summary(20.003), n: 97, missing: 3 } };
    const markdown = overheadMarkdown({ ...json, levels: [{ ...json.levels[0]!, targets: { direct: stats(20), conveyor: lacking } }] });
    const row = markdown.split('\n').find((l) => l.startsWith('| 100 | conveyor |'))!;
    expect(row.split(' | ')[2]).toBe('20.00 / 30.00*');
    expect(markdown).toContain('\\* 100 streams, conveyor: 3 of 100 streams had no content token; their TTFT is left out (the figures are from the other 97).');
    expect(markdown.split('\n').find((l) => l.startsWith('| 100 | direct |'))).not.toContain('*');
  });

  // The added TTFT is conveyor's percentile less direct's: the same streams were left out of it.
  it('stars the added TTFT beside it, and when direct lacked streams too', () => {
    const lacking = (p50: number) => ({ ...stats(p50), ttftMs: { ...summary(p50), n: 97, missing: 3 } });
    const row = (targets: OverheadJson['levels'][number]['targets']) =>
      overheadMarkdown({ ...json, levels: [{ ...json.levels[0]!, targets }] }).split('\n').find((l) => l.startsWith('| 100 | conveyor |'))!;
    expect(row({ direct: stats(20), conveyor: lacking(20.003) }).split(' | ')[4]).toBe('0.00 / +1.50*');
    expect(row({ direct: lacking(20), conveyor: stats(20.003) }).split(' | ')[4]).toBe('0.00 / +1.50*');
    expect(row({ direct: stats(20), conveyor: stats(20.003) }).split(' | ')[4]).toBe('0.00 / +1.50');
  });
});

describe('the overhead report, its opening', () => {
  // run.ts put "Command:" above the title; every other report opens with its title, the command under it.
  it('opens with its title, the command under it', () => {
    const lines = overheadMarkdown(json, 'npx tsx bench/overhead/run.ts --quick').split('\n');
    expect(lines[0]).toBe('# Gateway overhead — 2026-12-01');
    expect(lines[1]).toBe('');
    expect(lines[2]).toBe('Command: `npx tsx bench/overhead/run.ts --quick`  ');
    expect(lines[3]).toMatch(/^Node v20; 2 × test;/);
  });

  // In `npm run bench -- all` the section sits under the report's own command.
  it('has no command line when given none', () => {
    const lines = overheadMarkdown(json).split('\n');
    expect(lines[2]).toMatch(/^Node v20; 2 × test;/);
    expect(lines.some((l) => l.startsWith('Command:'))).toBe(false);
  });

  // At one stream the level has a dozen TTFTs (two with --quick): its p99 is the slowest stream.
  // The report gave p99s without saying how they were taken, so they read as a 1-in-100 tail.
  it('says how its percentiles are taken, and what p99 is with under 100 samples', () => {
    expect(overheadMarkdown(json)).toContain('p50 / p99: nearest rank (no interpolation); over fewer than 100 samples p99 is the largest.');
  });
});

describe('the overhead report, servers that never settled', () => {
  // runOverhead waits (at most 20 s) for each server's start-up CPU to end before the first level;
  // when the wait gave up, that CPU landed in the first level's CPU per token and the report
  // still said measuring began once every server had settled.
  it('says which server had not settled and which level its start-up CPU is counted in', () => {
    const markdown = overheadMarkdown({ ...json, meta: { ...json.meta, unsettled: ['conveyor', 'portkey'] } });
    expect(markdown).toContain(
      '**conveyor and portkey had not settled after their start-up when measuring began** (still above 10% of a core after 20 s): ' +
        'their start-up CPU is counted in the 100-stream level\'s CPU per 1k tokens, which reads high.',
    );
  });

  it('says nothing of it when every server settled', () => {
    expect(overheadMarkdown({ ...json, meta: { ...json.meta, unsettled: [] } })).not.toContain('had not settled');
    expect(overheadMarkdown(json)).not.toContain('had not settled');
  });
});
