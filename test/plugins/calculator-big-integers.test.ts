import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

/** The exact answer, from JS BigInts: a^b mod m. */
const powMod = (a: bigint, b: bigint, m: bigint) => String(a ** b % m);
const factorial = (n: bigint): bigint => (n <= 1n ? 1n : n * factorial(n - 1n));

// At 64 significant digits decimal.js rounds 7^100 (85 digits); mod then answered the rounding:
// mod(7^100, 13) was -1000000000000000000000, mod(3^200, 1000) was 0.
describe('calculator: integers past 64 digits', () => {
  it('answers a big power modulo a small number exactly', () => {
    expect(evaluateExact('mod(7^100, 13)')).toEqual({ ok: true, value: powMod(7n, 100n, 13n) });
    expect(evaluateExact('mod(3^200, 1000)')).toEqual({ ok: true, value: powMod(3n, 200n, 1000n) });
    expect(evaluateExact('99^99 mod 10')).toEqual({ ok: true, value: powMod(99n, 99n, 10n) });
    expect(evaluateExact('mod(2^3000, 7)')).toEqual({ ok: true, value: powMod(2n, 3000n, 7n) });
  });

  it('keeps the small difference of two big numbers, and a quotient of factorials', () => {
    expect(evaluateExact('(10^70 + 1) - 10^70')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('100!/98!')).toEqual({ ok: true, value: '9900' });
    // mathjs multiplied a factorial with its configured 64 (+4) digits whatever the precision
    // the result was computed again with: 100! kept 68 of its 158 digits (exact-factorial.ts).
    expect(evaluateExact('mod(100!, 101)')).toEqual({ ok: true, value: '100' });
    expect(evaluateExact('100! - 100 * 99!')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('mod(gamma(101), 101)')).toEqual({ ok: true, value: '100' });
    expect(evaluateExact('mod(200! / (100! * 100!), 7)')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('100!')).toEqual({ ok: true, value: String(factorial(100n)) });
    // A quotient within mathjs' default 1e-12 of an integer (fast-check's counterexample in CI).
    expect(evaluateExact('mod(2^71, 34477293483)')).toEqual({ ok: true, value: '32577614330' });
    expect(evaluateExact('floor(68485168146.9449)')).toEqual({ ok: true, value: '68485168146' });
    // Past 64 digits, the quotient's own tolerance was a whole unit.
    expect(evaluateExact('mod(3^149, 188556629359)')).toEqual({ ok: true, value: '162579461763' });
    expect(evaluateExact('[mod(-7, 3), mod(7, -3), mod(5.5, 2)]')).toEqual({ ok: true, value: '[2, -2, 1.5]' });
    expect(evaluateExact('floor(10^70/3) mod 10')).toEqual({ ok: true, value: '3' });
  });

  it('matches BigInt arithmetic for a^b mod m up to 900 digits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 2n, max: 999n }), fc.bigInt({ min: 1n, max: 300n }), fc.bigInt({ min: 2n, max: 10n ** 12n }), (a, b, m) => {
        expect(evaluateExact(`mod(${a}^${b}, ${m})`)).toEqual({ ok: true, value: powMod(a, b, m) });
      }),
      { numRuns: 150 },
    );
  });

  it('shows an integer result in full up to 1000 digits, as Python or bc print it', () => {
    // Was 1.07150860718626732094842504906000181056140481170553360744376e+301 (the description
    // promised integers exact to 1000 digits).
    expect(evaluateExact('2^1000')).toEqual({ ok: true, value: String(2n ** 1000n) });
    expect(evaluateExact('factorial(30)')).toEqual({ ok: true, value: String(factorial(30n)) });
    expect(evaluateExact('-(3^200)')).toEqual({ ok: true, value: String(-(3n ** 200n)) });
    expect(evaluateExact('2^300')).toEqual({ ok: true, value: String(2n ** 300n) });
    // 61 digits: one past what the rounded form shows.
    expect(evaluateExact('10^60 + 7')).toEqual({ ok: true, value: String(10n ** 60n + 7n) });
    // 449! has 997 digits, 10^999 exactly 1000.
    expect(evaluateExact('449!')).toEqual({ ok: true, value: String(factorial(449n)) });
    expect(evaluateExact('10^999 - 1')).toEqual({ ok: true, value: '9'.repeat(999) });
    expect(evaluateExact('[2^300, mod(7^100, 13)]')).toEqual({ ok: true, value: `[${2n ** 300n}, 9]` });
  });

  it('keeps the 60-digit form with an exponent for a non-integer and past 1000 digits', () => {
    expect(evaluateExact('10^1000')).toEqual({ ok: true, value: '1e+1000' });
    expect(evaluateExact('10^1000 + 1')).toEqual({ ok: true, value: '1e+1000' });
    // 1000! = 40238726007709377354370243392300398571937486421071463254379991… (2568 digits), to 60.
    expect(evaluateExact('1000!')).toEqual({ ok: true, value: '4.023872600770937735437024339230039857193748642107146325438e+2567' });
    expect(evaluateExact('2^5000 / 1000')).toMatchObject({ ok: true, value: expect.stringMatching(/e\+1502$/) });
    // At 64 digits these look like integers: computed with digits to spare, their fraction shows.
    expect(evaluateExact('sqrt(2) * 10^100')).toEqual({ ok: true, value: '1.41421356237309504880168872420969807856967187537694807317668e+100' });
    // Its 60th digit from the 310 computed (…744375|03…); the 64-digit rounding had made it 376.
    expect(evaluateExact('2^1000 + 0.5')).toEqual({ ok: true, value: '1.07150860718626732094842504906000181056140481170553360744375e+301' });
  });

  it('shows integers rounded again where all of them in full would make too long an observation', () => {
    // 20 integers of 1000 digits: 20,000 characters in full, the gateway's whole default observation.
    const result = evaluateExact('ones(1, 20) * (10^999 + 1)');
    expect(result).toEqual({ ok: true, value: `[[${Array(20).fill('1e+999').join(', ')}]]` });
    expect(evaluateExact('ones(1, 5) * (10^999 + 1)')).toEqual({ ok: true, value: `[[${Array(5).fill(String(10n ** 999n + 1n)).join(', ')}]]` });
  });

  it('refuses an answer that rounding past 1000 digits would change, saying why', () => {
    const result = evaluateExact('mod(2^5000, 7)');
    expect(result).toEqual({ ok: false, error: expect.stringContaining('the result is not exact: the calculation passes through a number with 1506 digits') });
  });

  it('computes the next expression with 64 digits again, constants and the disabled functions unchanged', () => {
    expect(evaluateExact('mod(2^3000, 7)')).toMatchObject({ ok: true });
    // 1/3 is rounded at the 64th digit (at 1000 digits this would be -1e-1000).
    expect(evaluateExact('1/3*3 - 1')).toEqual({ ok: true, value: '-1e-64' });
    expect(evaluateExact('pi/2')).toEqual({ ok: true, value: '1.57079632679489661923132169163975144209858469968755291048747' });
    expect(evaluateExact('mod(7^100, 13) + 0.1 + 0.2')).toEqual({ ok: true, value: '9.3' });
    expect(evaluateExact('config({"precision": 5})')).toEqual({ ok: false, error: 'function config is not available in the calculator' });
  });
});
