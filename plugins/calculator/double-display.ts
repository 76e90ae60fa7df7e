import type { MathCollection, MathJsInstance } from 'mathjs';

/**
 * Significant digits a double (a JS number: a complex number's parts, `number(x)`) is shown with.
 * BigNumbers are computed with 64 digits and shown with 60, so the guard digits hide rounding; a
 * double has about 16, and shown with them all its rounding showed: `(1+2i)^3` answered
 * `-10.999999999999998 - 1.9999999999999964i`, `sqrt(-2)^2` `-2.0000000000000004`. With 4 guard
 * digits, as the BigNumbers', `-11 - 2i` and `-2`. Past these digits a double is written with an
 * exponent: `number(2^60)` was `1152921504606847000`, digits a double does not have, shown as if
 * exact (2^60 is 1152921504606846976).
 */
export const DOUBLE_DIGITS = 12;

const DOUBLE_FORMAT = { precision: DOUBLE_DIGITS, lowerExp: -20, upperExp: DOUBLE_DIGITS };

/** A double's text at DOUBLE_DIGITS significant digits, with an exponent from 10^DOUBLE_DIGITS on. */
export function formatDouble(math: MathJsInstance, value: number): string {
  return math.format(value, DOUBLE_FORMAT);
}

type Complex = { re: number; im: number };

/**
 * The value with each complex number's parts rounded to DOUBLE_DIGITS digits of the larger one, as
 * a calculator shows them: a part below them is its rounding, and is 0. `e^(i*pi)` answered
 * `-1 + 0.00000000000000012246467991473532i`, `(1+i)^100` `-1125899906842625 - 0.55…i` (it is
 * -2^50). Walks arrays, matrices and plain objects; the same object back when nothing changed.
 */
export function roundedComplexParts(math: MathJsInstance, value: unknown): unknown {
  if (math.isComplex(value)) return roundedComplex(math, value as unknown as Complex);
  if (math.isMatrix(value)) {
    const items = value.valueOf() as unknown[];
    const rounded = roundedComplexParts(math, items);
    return rounded === items ? value : math.matrix(rounded as MathCollection);
  }
  if (Array.isArray(value)) {
    const rounded = value.map((item: unknown) => roundedComplexParts(math, item));
    return rounded.every((item, i) => item === value[i]) ? value : rounded;
  }
  if (math.isObject(value) && !math.isBigNumber(value) && !math.isUnit(value) && !math.isFraction(value)) {
    const entries = Object.entries(value as object);
    const rounded = entries.map(([key, item]): [string, unknown] => [key, roundedComplexParts(math, item)]);
    return rounded.every(([, item], i) => item === entries[i]![1]) ? value : Object.fromEntries(rounded);
  }
  return value;
}

function roundedComplex(math: MathJsInstance, value: Complex): unknown {
  const { re, im } = value;
  if (!Number.isFinite(re) || !Number.isFinite(im)) return value;
  const largest = Math.max(Math.abs(re), Math.abs(im));
  if (largest === 0) return value;
  const place = Math.floor(Math.log10(largest));
  const part = (x: number): number => {
    const digits = DOUBLE_DIGITS - (place - (x === 0 ? place : Math.floor(Math.log10(Math.abs(x)))));
    // Number(toPrecision) reads the decimal back: 1.00000000000 is exactly 1, and mathjs writes 1i as i.
    return x === 0 || digits <= 0 ? 0 : Number(x.toPrecision(Math.min(digits, 100)));
  };
  const [roundedRe, roundedIm] = [part(re), part(im)];
  return roundedRe === re && roundedIm === im ? value : math.complex(roundedRe, roundedIm);
}
