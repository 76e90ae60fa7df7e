import type { MathJsInstance } from 'mathjs';

/**
 * The most digits an integer result is shown with in full, as Python or bc print one: the tool's
 * description promises integers exact to 1000 digits, and `2^1000` or `30!` shown as `1.07…e+301`
 * left a model that wanted every digit (a digit sum, the last digits) nothing to read them from.
 * Longer integers (`1000!`, 2568 digits) keep the 60-digit form with an exponent.
 */
export const MAX_INTEGER_DIGITS = 1000;
/**
 * Digits computed past an integer's own before it counts as one: at exactly its length any real
 * number rounds to an integer (`sqrt(2) * 10^100`), while with these spare digits a fraction shows.
 */
export const SPARE_DIGITS = 8;
/**
 * Past this many characters a result with integers in full is shown with them rounded instead:
 * half the gateway's default maxObservationChars (20,000), so ten 1000-digit integers still fit
 * and a matrix of them is not an observation the gateway would cut (a row of the rounded form
 * answered before, and still does).
 */
export const MAX_EXACT_TEXT_LENGTH = 10_000;

type Big = { isInteger(): boolean; e: number; toFixed(dp: number): string };
type Shown = { displayDigits: number; format: (math: MathJsInstance, value: unknown) => string };

function digits(math: MathJsInstance, value: unknown): number | undefined {
  return math.isBigNumber(value) && value.isFinite() && (value as unknown as Big).isInteger() ? (value as unknown as Big).e + 1 : undefined;
}

/**
 * The precision the result must be computed with for its long integers to be shown in full: the
 * largest one's digits plus SPARE_DIGITS, counting those longer than `displayDigits` (the
 * rounded form shows shorter ones whole) and at most MAX_INTEGER_DIGITS long; 0 when there are none.
 * Walks matrices, arrays and objects; a unit or a complex number is shown rounded (mathjs writes
 * them itself).
 */
export function integerPrecision(math: MathJsInstance, value: unknown, displayDigits: number): number {
  const own = digits(math, value);
  if (own !== undefined) return own > displayDigits && own <= MAX_INTEGER_DIGITS ? own + SPARE_DIGITS : 0;
  const items = math.isMatrix(value) ? (value.valueOf() as unknown[]) : Array.isArray(value) ? value : isPlainObject(math, value) ? Object.values(value as object) : [];
  return items.reduce((max: number, item) => Math.max(max, integerPrecision(math, item, displayDigits)), 0);
}

function isPlainObject(math: MathJsInstance, value: unknown): boolean {
  return math.isObject(value) && !math.isBigNumber(value) && !math.isUnit(value) && !math.isComplex(value) && !math.isFraction(value);
}

/**
 * The result's text: integers computed with SPARE_DIGITS to spare at `precision` (and at
 * most MAX_INTEGER_DIGITS long) in full, every other number as `rounded` writes it, and all of it
 * rounded when the full text would pass MAX_EXACT_TEXT_LENGTH.
 */
export function formatResult(math: MathJsInstance, value: unknown, precision: number, rounded: Shown): string {
  const roundedText = rounded.format(math, value);
  if (integerPrecision(math, value, rounded.displayDigits) === 0) return roundedText;
  const exact = (x: unknown): string => {
    const n = digits(math, x);
    return n !== undefined && n <= MAX_INTEGER_DIGITS && n + SPARE_DIGITS <= precision ? (x as Big).toFixed(0) : rounded.format(math, x);
  };
  const text = math.format(value, exact);
  return text.length <= MAX_EXACT_TEXT_LENGTH ? text : roundedText;
}
