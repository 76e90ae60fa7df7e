import { createRequire } from 'node:module';
import type { MathJsInstance } from 'mathjs';
import { mathjsOperators } from './operator-spelling.ts';
import { roundingStaysHidden, smallestExponent, watchMagnitudes, withLargestExponent } from './rounded-integers.ts';
import { exactFactorial } from './exact-factorial.ts';
import { formatResult, integerPrecision } from './integer-display.ts';
import { formatDouble, roundedComplexParts } from './double-display.ts';
import { withSyntaxHint } from './syntax-hints.ts';
import { trigWithZeros } from './trig-zeros.ts';

/** Significant digits computed; results show DISPLAY_DIGITS so guard digits hide rounding (1/3*3 → 1). */
const PRECISION = 64;
const DISPLAY_DIGITS = 60;
/**
 * The most digits a result is computed again with when integer rounding would show in it
 * (rounded-integers.ts): decimal.js keeps ln(10) and pi to 1025 digits, and refuses a precision
 * past them for log and trigonometry; at 1000 digits the slowest functions take ~0.5 s (`2^(1/3)`).
 */
const MAX_PRECISION = 1000;
/** Digits past the largest integer a computation passes through, so that it is exact again. */
const INTEGER_GUARD_DIGITS = 8;
/** Longer input is not arithmetic a model means to do by hand; it also bounds parse time. */
export const MAX_EXPRESSION_LENGTH = 2000;
/** Longer results (a big matrix, `ones(1000, 1000)` is 3 MB of text) are an error, not an observation. */
export const MAX_RESULT_LENGTH = 64 * 1024;

/**
 * `truth` is set when the value is one boolean (a comparison): `value` is then mathjs' `true`, the
 * calculator's own syntax, and the plugin hands the boolean on as data.value (a plan writes it True).
 */
export type Evaluation = { ok: true; value: string; truth?: boolean } | { ok: false; error: string };

type Instance = { math: MathJsInstance; evaluate: MathJsInstance['evaluate']; setPrecision: (precision: number) => void };
let ready: Instance | undefined;

/**
 * Names each expression's scope shadows. `typed`, mathjs' type system, cannot be imported over
 * (its lazy factories find it in the namespace) and its methods are callable from an expression:
 * `typed.clear()` or `typed.addConversion(…)` changed how every function built after it works,
 * for the calls after it too (a kept process serves many requests' calls). In the scope it is a
 * function with no methods, and the namespace's own is out of reach.
 */
const SHADOWED = ['typed'];

/**
 * mathjs with BigNumbers (decimal.js), so `0.1 + 0.2` is `0.3` and `2^100` has all its digits.
 * mathjs parses into its own AST and never calls JS eval/Function; on top of that, as its
 * security guide advises, the functions that reach the parser or change the instance
 * (import, createUnit, evaluate, parse, compile, parser, and every one that takes a Node: simplify,
 * derivative, …) are disabled inside
 * expressions, and so is `config`; `typed` is shadowed in each expression's scope (SHADOWED): no
 * expression may change how the next one (another call's, in the same process) is computed.
 */
function instance(): Instance {
  if (!ready) {
    // The package's single-file build (an exported entry point, same library and version): one
    // file instead of ~1000 ES modules, 0.2 s to load instead of 1-2 s. It exports a ready
    // instance (not the factories), private to this module: nothing else loads that path.
    const math = createRequire(import.meta.url)('mathjs/lib/browser/math.js') as MathJsInstance;
    // mathjs' default tolerance (relTol 1e-12) is a double's: floor, ceil and mod took a quotient
    // within 1e-12 of an integer for that integer, so mod(2^71, 34477293483) (quotient
    // 68485168146.94…) answered -1899679153, not 32577614330. At 64 digits the rounding a result
    // may carry is what the DISPLAY_DIGITS guard digits hide: that is the tolerance.
    math.config({ number: 'BigNumber', precision: PRECISION, relTol: 10 ** -DISPLAY_DIGITS, absTol: 10 ** -(PRECISION - 1) });
    const evaluate = math.evaluate;
    watchMagnitudes(math.bignumber(1));
    // parser() hands out a Parser whose evaluate() runs in a scope of its own, where `typed` is the
    // namespace's real one: `parser().evaluate("typed.clear()")` went past SHADOWED.
    // help(sqrt) builds its text by evaluating the documentation's examples: it failed with
    // "function config is not available", which told a model nothing it could act on.
    const names = ['import', 'createUnit', 'config', 'evaluate', 'parse', 'compile', 'parser', 'reviver', 'replacer', 'help', ...nodeFunctions(math)];
    // Before `import` itself is disabled below.
    // ln: Python's and most calculators' name for the natural log, mathjs' log(x).
    math.import({ mod: exactMod(math), ln: math.log, ...trigWithZeros(math), ...exactFactorial(math) }, { override: true });
    math.import(Object.fromEntries(names.map((name) => [name, unavailable(name)])), { override: true });
    // decimal.js' own setting, which every operation reads: a few µs. mathjs' config({ precision })
    // rebuilt its BigNumber class, units and constants (pi, e, ln 2) at the new precision: 0.6 s
    // back from 1000 digits. Constants stay at 64 digits while a result is computed again, which
    // is about integers (exactValue).
    const classes = math as unknown as { BigNumber: { config(settings: { precision: number }): unknown } };
    ready = { math, evaluate, setPrecision: (precision) => void classes.BigNumber.config({ precision }) };
  }
  return ready;
}

type Big = { isZero(): boolean; isNeg(): boolean; mod(y: Big): Big; plus(y: Big): Big };

/**
 * mathjs' mod of two BigNumbers is x - y·floor(x/y), its floor taking a quotient within its
 * tolerance (relative to the quotient) of an integer for that integer: past 10^60 that is a whole
 * unit, and mod(3^149, 188556629359) answered -25977167596 (fast-check's counterexample). decimal.js'
 * own remainder is exact; it is given y's sign, as mathjs' mod is, and the other signatures stay.
 * A zero divisor is an error, as Python's ZeroDivisionError, not mathjs' x.
 */
function exactMod(math: MathJsInstance): unknown {
  const mod = math.mod as unknown as { signatures: Record<string, unknown> };
  const remainder = (x: Big, y: Big): Big => {
    // mathjs' convention is mod(x, 0) = x: `5 mod 0` answered 5, a silent value where Python raises.
    if (y.isZero()) throw new Error('division by zero: the remainder of x mod 0 is undefined');
    const r = x.mod(y);
    return !r.isZero() && r.isNeg() !== y.isNeg() ? r.plus(y) : r;
  };
  return (math.typed as unknown as (name: string, signatures: Record<string, unknown>) => unknown)('mod', { ...mod.signatures, 'BigNumber,BigNumber': remainder });
}

/**
 * The functions that take an expression tree (a Node: simplify, simplifyConstant, derivative,
 * rationalize, …), found by their signatures so that one a later mathjs adds is caught too. Each
 * parses a string into a Node, whose methods an expression may call: `simplifyConstant("typed")
 * .evaluate()` returned the namespace's own `typed`, past SHADOWED. The `is…` tests only answer
 * true or false.
 */
function nodeFunctions(math: MathJsInstance): string[] {
  return Object.entries(math as unknown as Record<string, unknown>)
    .filter(([name, fn]) => typeof fn === 'function' && !/^is[A-Z]/.test(name) && Object.keys((fn as { signatures?: object }).signatures ?? {}).some((s) => /\bNode\b/.test(s)))
    .map(([name]) => name);
}

/**
 * A new expression scope, with the SHADOWED names in it, and Python's True and False: a plan (whose
 * literals are Python) writes a comparison's `$n` so, and `calculator("$1 and x > 2")` must read it.
 */
function freshScope(): Map<string, unknown> {
  return new Map<string, unknown>([['True', true], ['False', false], ...SHADOWED.map((name): [string, unknown] => [name, unavailable(name)])]);
}

function unavailable(name: string): () => never {
  return () => {
    throw new Error(`function ${name} is not available in the calculator`);
  };
}

/** Loads and sets up mathjs now (the calculator's onLoad, as its worker starts, and its onStart), so the first expression does not wait for it. */
export function warmExactMath(): void {
  instance();
}

/**
 * Evaluates one expression (or several separated by ";" or newlines: the last value counts) in
 * a fresh scope. Errors (syntax, unknown symbol, wrong types) come back as `{ ok: false }`, and so
 * does a result holding Infinity or NaN (`1/0`, `10^(10^20)`, `0/0`).
 *
 * @example
 * evaluateExact('200*701') // { ok: true, value: '140200' }
 */
export function evaluateExact(expression: string): Evaluation {
  if (expression.length > MAX_EXPRESSION_LENGTH) return { ok: false, error: `expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
  if (expression.trim() === '') return { ok: false, error: 'empty expression' };
  const { math } = instance();
  try {
    const { value, precision } = exactValue(mathjsOperators(expression));
    if (value === undefined) return { ok: false, error: 'the expression has no value' };
    if (typeof value === 'function') return { ok: false, error: 'the expression is a function, not a value (call it, e.g. sqrt(2))' };
    const text = formatResult(math, roundedComplexParts(math, value), precision, ROUNDED);
    if (text.length > MAX_RESULT_LENGTH) {
      return { ok: false, error: `the result is ${text.length} characters long, more than the ${MAX_RESULT_LENGTH} the calculator returns (reduce it, e.g. with sum, size or an index)` };
    }
    // After the length check, so a huge matrix is not walked: it is refused already.
    const problem = nonFiniteProblem(math, value);
    if (problem !== undefined) return { ok: false, error: problem };
    return typeof value === 'boolean' ? { ok: true, value: text, truth: value } : { ok: true, value: text };
  } catch (err) {
    return { ok: false, error: withSyntaxHint(expression, err instanceof Error ? err.message : String(err)) };
  }
}

/**
 * Every number but an integer shown in full (integer-display.ts): 60 digits, an exponent past them;
 * a double (a complex number's parts, `number(x)`) with its own fewer digits (double-display.ts).
 */
const ROUNDED = {
  displayDigits: DISPLAY_DIGITS,
  format: (math: MathJsInstance, value: unknown) =>
    math.format(value, (x: unknown) => (typeof x === 'number' ? formatDouble(math, x) : math.format(x, { precision: DISPLAY_DIGITS, lowerExp: -20, upperExp: DISPLAY_DIGITS }))),
};

/**
 * The expression's value, computed again with more digits (up to MAX_PRECISION) while rounding an
 * integer past PRECISION digits would show in it (rounded-integers.ts): `mod(7^100, 13)` is 9, not
 * the rounding's -1e+21. So too while a result that looks like an integer longer than the digits
 * shown has too few digits to spare to tell (integer-display.ts): `2^1000` is then shown in full.
 * Most expressions never pass 10^60 and are evaluated once.
 */
function exactValue(expression: string): { value: unknown; precision: number } {
  const { math, setPrecision } = instance();
  let precision = PRECISION;
  let run = measuredValue(expression);
  for (;;) {
    if (roundingStaysHidden(run, precision, DISPLAY_DIGITS)) {
      // Only ever more digits, so this ends: a recomputed result whose integer grew by a digit
      // (9.99…e+99 to 1e+100) asks once more, a non-integer asks nothing.
      const wanted = integerPrecision(math, run.value, DISPLAY_DIGITS);
      if (wanted <= precision) return { value: run.value, precision };
      precision = wanted;
    } else if (precision >= MAX_PRECISION) {
      throw new Error(
        `the result is not exact: the calculation passes through a number with ${run.largestExponent + 1} digits, ` +
          `more than the ${MAX_PRECISION} significant digits the calculator keeps, and that rounding would change the answer (use smaller numbers)`,
      );
    } else {
      precision = Math.min(MAX_PRECISION, Math.ceil((run.largestExponent + INTEGER_GUARD_DIGITS) / PRECISION) * PRECISION);
    }
    setPrecision(precision);
    try {
      run = measuredValue(expression);
    } finally {
      setPrecision(PRECISION);
    }
  }

  function measuredValue(text: string): { value: unknown; largestExponent: number; smallestExponent: number } {
    const { value, largestExponent } = withLargestExponent(() => lastValue(instance().evaluate(text, freshScope())));
    return { value, largestExponent, smallestExponent: largestExponent < precision ? Infinity : smallestExponent(math, value) };
  }
}

/** A multi-statement expression's (`a = 2; a^3`) last value. */
function lastValue(value: unknown): unknown {
  if ((value as { isResultSet?: boolean } | null)?.isResultSet !== true) return value;
  const entries = (value as { entries: unknown[] }).entries;
  return entries[entries.length - 1];
}

/**
 * Why a value holding Infinity or NaN (anywhere: a matrix element, a unit's magnitude, a complex
 * part) is no answer. mathjs returns them as numbers, so a division by zero or an overflow
 * (`10^(10^20)` exceeds decimal.js' exponent range) would reach the model, or a later plan step's
 * `$n`, as if it were a value.
 */
function nonFiniteProblem(math: MathJsInstance, value: unknown): string | undefined {
  const found = nonFinite(math, value);
  if (found === undefined) return undefined;
  if (found === 'NaN') return 'the result is NaN, not a number (an undefined operation such as 0/0 or Infinity - Infinity)';
  return `the result is ${found === 1 ? '' : '-'}Infinity, not a number (a division by zero, or a value too large to represent)`;
}

function nonFinite(math: MathJsInstance, value: unknown): 1 | -1 | 'NaN' | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? undefined : Math.sign(value) as 1 | -1;
  if (math.isBigNumber(value)) return value.isNaN() ? 'NaN' : value.isFinite() ? undefined : value.isNegative() ? -1 : 1;
  if (math.isComplex(value)) return nonFinite(math, value.re) ?? nonFinite(math, value.im);
  if (math.isUnit(value)) return nonFinite(math, value.value);
  if (math.isMatrix(value)) return nonFinite(math, value.valueOf());
  if (Array.isArray(value)) return firstNonFinite(math, value);
  if (math.isObject(value)) return firstNonFinite(math, Object.values(value as object));
  return undefined;
}

function firstNonFinite(math: MathJsInstance, values: readonly unknown[]): 1 | -1 | 'NaN' | undefined {
  for (const item of values) {
    const found = nonFinite(math, item);
    if (found !== undefined) return found;
  }
  return undefined;
}
