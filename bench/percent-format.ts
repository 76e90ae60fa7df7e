/**
 * Percentages in the bench reports, one way for all of them: "–" where there is no figure (NaN
 * from an empty sample, a division by zero), and never "-0.0%" for a value that rounds to zero
 * (a "Calculator −0.0%" improvement read as a loss the run never showed at that precision).
 */
import { fixedDigits } from './fixed-digits.ts';

/** A value already in percent: 33.33 → "33.3%". */
export function percent(v: number | undefined, digits = 1): string {
  const text = fixedDigits(v, digits);
  return text === '–' ? text : `${text}%`;
}

/** A share or ratio as a fraction of one: 0.3333 → "33.3%". */
export function fractionPercent(v: number | undefined, digits = 1): string {
  return percent(v === undefined ? v : v * 100, digits);
}
