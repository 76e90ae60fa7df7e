import type { ParserMode } from './parser-cpu.ts';

/** This tree's gateway CPU per request over a baseline's (`--baseline`): under 1, this tree is cheaper. */
export interface BaselineRatio {
  /** Pairs of rounds behind the ratios: those where both gateways' pair has every figure. */
  pairs: number;
  parse: number;
  none: number;
  /** Of the parsing cost (parse − none). */
  difference: number;
}

/**
 * Ratios of the means over the pairs both gateways completed (`ours`, `theirs`: each one's
 * roundPairs, in the order run). runParserCpu runs pair k of each gateway back to back, so a pair
 * one of them lost (a failed request) is left out of the other's mean too: both means then cover
 * the same stretches of the run, which a slower hour of a shared host would otherwise tilt. Each
 * gateway's own figures (pairedFigures) keep all of its pairs.
 */
export function baselineRatio(ours: ReadonlyArray<Record<ParserMode, number>>, theirs: ReadonlyArray<Record<ParserMode, number>>): BaselineRatio {
  if (ours.length !== theirs.length) throw new Error(`parser-cpu: ${ours.length} pairs of rounds against the baseline's ${theirs.length}`);
  const kept = ours.flatMap((p, k) => (Number.isNaN(p.parse + p.none + theirs[k]!.parse + theirs[k]!.none) ? [] : [{ ours: p, theirs: theirs[k]! }]));
  const mean = (f: (x: (typeof kept)[number]) => number) => kept.reduce((sum, x) => sum + f(x), 0) / kept.length;
  return {
    pairs: kept.length,
    parse: mean((x) => x.ours.parse) / mean((x) => x.theirs.parse),
    none: mean((x) => x.ours.none) / mean((x) => x.theirs.none),
    difference: mean((x) => x.ours.parse - x.ours.none) / mean((x) => x.theirs.parse - x.theirs.none),
  };
}
