import { describe, expect, it } from 'vitest';
import { roundCpu } from '../../../bench/overhead/parser-cpu.ts';
import { parserCpuMarkdown } from '../../../bench/overhead/parser-cpu-report.ts';
import type { ParserCpuJson } from '../../../bench/overhead/parser-cpu.ts';
import { summarize } from '../../../bench/stats.ts';

// A failed request costs the gateway less CPU than a whole stream; divided over all 40 sent,
// a round with failures read as cheaper per request than it was.
describe('a parser-cpu round with failed requests', () => {
  it('divides its CPU by the requests that completed correctly, not by all sent', () => {
    expect(roundCpu('parse', 30_000, 40, 30)).toEqual({ mode: 'parse', cpuUs: 30_000, requests: 40, completed: 30, perRequestUs: 1000 });
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
      shareOfGatewayCpuPct: 11,
      extraOverPassThroughPct: 12,
      checks: { parse: { requests: 40, ok: 40, errors: [] }, none: { requests: 40, ok: 40, errors: [] } },
    };
    expect(parserCpuMarkdown(json)).toMatch(/divided by the requests that completed correctly/);
  });
});
