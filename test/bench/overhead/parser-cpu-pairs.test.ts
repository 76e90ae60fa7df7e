import { describe, expect, it } from 'vitest';
import { pairedFigures, roundCpu } from '../../../bench/overhead/parser-cpu.ts';

// Rounds run in pairs, A B then B A (runParserCpu): [parse, none], [none, parse], …
describe('parser-cpu figures from paired rounds', () => {
  it('are hand-computed means, sample std and paired differences when every round has its figure', () => {
    const rounds = [roundCpu('parse', 9000, 10, 10), roundCpu('none', 8000, 10, 10), roundCpu('none', 8200, 10, 10), roundCpu('parse', 9400, 10, 10)];
    const { parse, none, difference } = pairedFigures(rounds);
    // parse 900, 940; none 800, 820; differences 100, 120.
    expect(parse).toMatchObject({ n: 2, mean: 920, p50: 900, p99: 940 });
    expect(parse.std).toBeCloseTo(Math.sqrt(800), 9);
    expect(none).toMatchObject({ n: 2, mean: 810 });
    expect(difference).toMatchObject({ n: 2, mean: 110 });
    expect(difference.std).toBeCloseTo(Math.sqrt(200), 9);
  });

  // Before: each mode's summary left out only its own missing rounds, so the parse figure kept a
  // round whose pass-through pair had none, and the share of CPU (difference / parse mean) divided
  // one set of pairs' difference by another set's mean.
  it('leave a round without a figure out with its pair, from every figure', () => {
    const rounds = [roundCpu('parse', 9000, 10, 10), roundCpu('none', 8000, 10, 10), roundCpu('none', 500, 10, 0), roundCpu('parse', 20_000, 10, 10)];
    const { parse, none, difference } = pairedFigures(rounds);
    expect(parse).toMatchObject({ n: 1, mean: 900 });
    expect(none).toMatchObject({ n: 1, mean: 800 });
    expect(difference).toMatchObject({ n: 1, mean: 100 });
  });
});
