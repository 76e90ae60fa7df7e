import { describe, expect, it } from 'vitest';
import { roundCpu } from '../../../bench/overhead/parser-cpu.ts';
import { parserCpuMarkdown } from '../../../bench/overhead/parser-cpu-report.ts';
import type { ParserCpuJson } from '../../../bench/overhead/parser-cpu.ts';
import { summarize } from '../../../bench/stats.ts';

// A failed request costs the gateway some CPU, less than a whole stream, and how much is unknown:
// divided over all 40 sent, a round with failures read as cheaper per request than it was; divided
// over the 30 that completed (until this test), the failed ones' CPU was spread over those, and
// read dearer.
describe('a parser-cpu round with failed requests', () => {
  it('has no figure (NaN), so it is left out with its pair', () => {
    expect(roundCpu('parse', 30_000, 40, 30)).toEqual({ mode: 'parse', cpuUs: 30_000, requests: 40, completed: 30, perRequestUs: Number.NaN });
  });

  it('divides a round where all completed by its requests', () => {
    expect(roundCpu('parse', 30_000, 40, 40).perRequestUs).toBe(750);
  });

  it('gives no figure for a round where none completed (not Infinity)', () => {
    expect(roundCpu('none', 500, 10, 0).perRequestUs).toBeNaN();
  });

  it('says so in the report', () => {
    const json: ParserCpuJson = {
      meta: { date: '2026-12-01', node: 'v20', cpus: '2 × test', workload: 'save_report', profile: 'test' },
      requestsPerRound: 40,
      concurrency: 20,
      perRequestUs: { parse: summarize([9000]), none: summarize([8000]) },
      rounds: [],
      differenceUs: { mean: 1000, standardError: 0 },
      pairsLeftOut: 3,
      shareOfGatewayCpuPct: 11,
      extraOverPassThroughPct: 12,
      checks: { parse: { requests: 40, ok: 40, errors: [] }, none: { requests: 40, ok: 40, errors: [] } },
    };
    expect(parserCpuMarkdown(json)).toContain('3 pairs of rounds left out: a round where a request failed has no figure');
  });
});
