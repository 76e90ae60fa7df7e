import type { MathJsInstance } from 'mathjs';

/**
 * pi is a 64-digit BigNumber, so sin(pi) is sin of a number 1.6e-64 away from pi: 3.078…e-64, and
 * tan(pi/2) 7.07e+36. A decimal argument x carries a rounding of about |x|·10^-63, which moves sin
 * and cos by as much; a result below |x|·10^-60 cannot be told from zero and is answered as 0
 * (tan, as sin/cos, then has no value at pi/2: Infinity, which exact-math.ts refuses; so too cot,
 * sec and csc, as cos/sin, 1/cos and 1/sin: mathjs' own answered cot(pi/2) 1.4e-37 and csc(pi)
 * 3.2e+63, the same rounding, turned over). Only for
 * |x| up to 10^6: sin of a larger number (an exact 10^70) may be small without being noise.
 */
const NOISE_DIGITS = 60;
const LARGEST_ARGUMENT = 1e6;

type Big = { abs(): Big; lt(y: Big | number): boolean; lte(y: Big | number): boolean; times(y: Big | string): Big; div(y: Big): Big; isZero(): boolean; constructor: new (value: number) => Big };
type Name = 'sin' | 'cos' | 'tan' | 'cot' | 'sec' | 'csc';
type Typed = (name: string, signatures: Record<string, unknown>) => unknown;

/** mathjs' sin, cos, tan, cot, sec and csc with their BigNumber signature answering 0 (or, as its reciprocal, Infinity) for a sin or cos that is the argument's rounding; the other signatures stay. */
export function trigWithZeros(math: MathJsInstance): Record<Name, unknown> {
  const original = (name: 'sin' | 'cos') => (math[name] as unknown as { signatures: Record<string, (x: Big) => Big> }).signatures['BigNumber']!;
  const zeroed = (fn: (x: Big) => Big) => (x: Big): Big => {
    const result = fn(x);
    const bound = x.abs();
    return bound.lte(LARGEST_ARGUMENT) && result.abs().lt(bound.times(`1e-${NOISE_DIGITS}`)) ? new x.constructor(0) : result;
  };
  const sin = zeroed(original('sin'));
  const cos = zeroed(original('cos'));
  const typed = math.typed as unknown as Typed;
  const withBig = (name: Name, fn: (x: Big) => Big) =>
    typed(name, { ...(math[name] as unknown as { signatures: Record<string, unknown> }).signatures, BigNumber: fn });
  const one = (x: Big) => new x.constructor(1);
  return {
    sin: withBig('sin', sin),
    cos: withBig('cos', cos),
    tan: withBig('tan', (x) => sin(x).div(cos(x))),
    cot: withBig('cot', (x) => cos(x).div(sin(x))),
    sec: withBig('sec', (x) => one(x).div(cos(x))),
    csc: withBig('csc', (x) => one(x).div(sin(x))),
  };
}
