import type { MathJsInstance } from 'mathjs';

/**
 * Past its precision (64 significant digits) decimal.js rounds an integer like any number: 7^100
 * (85 digits) keeps its first 64. The rounded number is still right to the 60 digits shown, but a
 * later step that cancels its leading digits (mod, a difference, a comparison) leaves only the
 * rounding: `mod(7^100, 13)` answered -1000000000000000000000, `mod(3^200, 1000)` answered 0. This
 * module watches the numbers an evaluation passes through, so that exact-math.ts can tell such a
 * result from a trustworthy one and compute it again with enough digits.
 */

type Decimal = { d: number[] | null; e: number };

let largest = -Infinity;
let depth = 0;
const watched = new WeakSet<object>();
/** decimal.js methods that answer a yes/no, a count or text, never a number: not wrapped (most calls mathjs makes are these). */
const NOT_NUMBERS = /^(is[A-Z]\w*|eq|equals|gte?|lte?|greaterThan\w*|lessThan\w*|cmp|comparedTo|dp|decimalPlaces|sd|precision|valueOf|to(String|JSON|Number|Fixed|Exponential|Precision|Binary|Hex|Hexadecimal|Octal|Fraction))$/;

/**
 * Wraps decimal.js' methods (on the prototype all of one mathjs instance's BigNumbers share, at any
 * precision) to note the largest exponent of a number mathjs' functions get back. Only the
 * outermost call counts: decimal.js' own series (exp sums terms with 30-digit denominators) round
 * inside a function whose answer is right, and would otherwise look like a rounded integer.
 */
export function watchMagnitudes(sample: object): void {
  let proto: object | null = Object.getPrototypeOf(sample) as object | null;
  while (proto !== null && !Object.prototype.hasOwnProperty.call(proto, 'plus')) proto = Object.getPrototypeOf(proto) as object | null;
  if (proto === null) throw new Error('mathjs BigNumber has no decimal.js prototype to watch');
  if (watched.has(proto)) return;
  watched.add(proto);
  for (const name of Object.getOwnPropertyNames(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    const original: unknown = descriptor?.value;
    if (name === 'constructor' || typeof original !== 'function' || NOT_NUMBERS.test(name)) continue;
    Object.defineProperty(proto, name, {
      ...descriptor,
      value: function watched(this: unknown, ...args: unknown[]): unknown {
        depth++;
        let result: unknown;
        try {
          result = (original as (...a: unknown[]) => unknown).apply(this, args);
        } finally {
          depth--;
        }
        if (depth === 0 && isFiniteDecimal(result) && result.e > largest) largest = result.e;
        return result;
      },
    });
  }
}

function isFiniteDecimal(value: unknown): value is Decimal {
  return typeof value === 'object' && value !== null && Array.isArray((value as Decimal).d) && typeof (value as Decimal).e === 'number';
}

/** Runs `evaluate` and returns its value with the largest decimal exponent of a number it made (-Infinity: none). */
export function withLargestExponent<T>(evaluate: () => T): { value: T; largestExponent: number } {
  largest = -Infinity;
  depth = 0;
  const value = evaluate();
  return { value, largestExponent: largest };
}

/**
 * The decimal exponent of the result's smallest number: the place of its last shown digit follows
 * from it. -Infinity where rounding cannot be told from the answer at all: a zero (`2^300 - 2^300`),
 * a yes/no (`2^300 + 1 > 2^300`), text.
 */
export function smallestExponent(math: MathJsInstance, value: unknown): number {
  if (typeof value === 'number') return value === 0 ? -Infinity : Math.floor(Math.log10(Math.abs(value)));
  if (math.isBigNumber(value)) return value.isZero() ? -Infinity : value.e;
  if (math.isComplex(value)) return Math.min(smallestExponent(math, value.re), smallestExponent(math, value.im));
  if (math.isUnit(value)) return value.value === null ? Infinity : smallestExponent(math, value.value);
  if (math.isMatrix(value)) return smallestExponent(math, value.valueOf());
  if (Array.isArray(value)) return value.reduce((min: number, item) => Math.min(min, smallestExponent(math, item)), Infinity);
  return -Infinity;
}

/**
 * Whether a result computed with `precision` digits shows `shownDigits` of them that rounding did
 * not reach. Either no number it passed through had more integer digits than `precision` (then
 * integers were exact, and other rounding is the guard digits' business, as for 1/3), or the
 * result is large enough that the largest one's rounding (about 10^(largest - precision + 1))
 * lies below its last shown digit: `2^300` and `170!` are shown rounded, and rightly so.
 */
export function roundingStaysHidden(run: { largestExponent: number; smallestExponent: number }, precision: number, shownDigits: number): boolean {
  return run.largestExponent < precision || run.smallestExponent >= run.largestExponent - (precision - shownDigits) + 1;
}
