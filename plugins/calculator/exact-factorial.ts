import type { MathJsInstance } from 'mathjs';

/**
 * mathjs' factorial of a BigNumber multiplies with config.precision digits (64, plus a few), not
 * the BigNumber class's own precision, which is what exact-math.ts raises to compute a result
 * again: `100!` kept its first 68 digits at any precision, so `mod(100!, 101)` answered 90 (it is
 * 100, Wilson's theorem) and `100! - 100*99!` a 92-digit number, not 0. Here the product is taken
 * with the class's precision plus the digits its rounding could climb through (as mathjs does
 * for its own), then rounded to that precision: exact wherever the class's precision holds it.
 */

type Big = {
  isInteger(): boolean;
  isNegative(): boolean;
  isZero(): boolean;
  isFinite(): boolean;
  minus(y: number): Big;
  times(y: number): Big;
  toNumber(): number;
  toPrecision(sd: number): string;
  constructor: BigClass;
};
type BigClass = { new (value: number | string): Big; precision: number; clone(settings: { precision: number }): BigClass };
type Typed = (name: string, signatures: Record<string, unknown>) => unknown;

/** n! for a whole n ≥ 0, with n's class's precision. */
function factorialOf(n: Big): Big {
  const count = n.toNumber();
  const Big = n.constructor;
  // Each of the n - 1 products rounds once; their errors add up to about n units of the last
  // digit kept, so log10(n) + 2 more digits keep the rounded result right.
  const Wide = Big.clone({ precision: Big.precision + Math.ceil(Math.log10(count + 1)) + 2 });
  let product = new Wide(1);
  for (let i = 2; i <= count; i++) product = product.times(i);
  return new Big(product.toPrecision(Big.precision));
}

/** mathjs' factorial and gamma with their BigNumber signature computed by factorialOf for whole numbers; the others stay. */
export function exactFactorial(math: MathJsInstance): Record<'factorial' | 'gamma', unknown> {
  const signatures = (name: 'factorial' | 'gamma') => (math[name] as unknown as { signatures: Record<string, (n: Big) => Big> }).signatures;
  const typed = math.typed as unknown as Typed;
  const factorial = signatures('factorial');
  const gamma = signatures('gamma');
  return {
    factorial: typed('factorial', {
      ...factorial,
      BigNumber: (n: Big) => (n.isInteger() && !n.isNegative() ? factorialOf(n) : factorial['BigNumber']!(n)),
    }),
    // gamma(n) = (n - 1)! for a whole n ≥ 1; 0 and the negative ones stay mathjs' (Infinity).
    gamma: typed('gamma', {
      ...gamma,
      BigNumber: (n: Big) => (n.isInteger() && !n.isNegative() && !n.isZero() ? factorialOf(n.minus(1)) : gamma['BigNumber']!(n)),
    }),
  };
}
