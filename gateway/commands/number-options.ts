import { InvalidArgumentError } from 'commander';

/**
 * A commander option parser for a whole number from `min` to `max`. Strict where parseInt is not:
 * "2abc", "1.9" and "1e3" are refused rather than read as 2, 1 and 1.
 */
export function wholeNumber(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `expected a whole number ≥ ${min}` : `expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

/** Comma-separated whole numbers from `min` up, e.g. `1,100,500`. */
export function wholeNumbers(min: number): (value: string) => number[] {
  const one = wholeNumber(min);
  return (value) => {
    try {
      return value.split(',').map(one);
    } catch {
      throw new InvalidArgumentError(`expected comma-separated whole numbers ≥ ${min}, e.g. 1,100,500`);
    }
  };
}
