import { describe, expect, it } from 'vitest';
import { roundCpu, roundPairs } from '../../../bench/overhead/parser-cpu.ts';
import { baselineRatio } from '../../../bench/overhead/parser-cpu-ratio.ts';

// Per request: cpuUs / 10 requests.
const pairOf = (parse: number, none: number, completed = 10) => [roundCpu('parse', parse * 10, 10, completed), roundCpu('none', none * 10, 10, 10)];

describe('parser-cpu --baseline ratio', () => {
  it('is the ratio of the means, parsed, pass-through and of the parsing cost', () => {
    const ours = roundPairs([...pairOf(900, 800), ...pairOf(1100, 1000)]);
    const theirs = roundPairs([...pairOf(1000, 800), ...pairOf(1400, 1000)]);
    const ratio = baselineRatio(ours, theirs);
    expect(ratio.pairs).toBe(2);
    expect(ratio.parse).toBeCloseTo(1000 / 1200, 12);
    expect(ratio.none).toBeCloseTo(1, 12);
    expect(ratio.difference).toBeCloseTo(100 / 300, 12);
  });

  // Each gateway's own figures leave out only its own lost pairs; the ratio compares the same
  // stretches of the run, so a pair either gateway lost is left out of both means.
  it('leaves a pair that either gateway lost out of both means', () => {
    const ours = roundPairs([...pairOf(900, 800), ...pairOf(5000, 800)]);
    const theirs = roundPairs([...pairOf(1000, 800), ...pairOf(1000, 800, 9)]);
    expect(baselineRatio(ours, theirs)).toMatchObject({ pairs: 1, parse: 0.9, none: 1 });
  });

  it('refuses rounds that do not line up pair for pair', () => {
    expect(() => baselineRatio(roundPairs(pairOf(900, 800)), [])).toThrow(/1 pairs of rounds against the baseline's 0/);
  });
});
