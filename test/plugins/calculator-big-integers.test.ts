import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

/** The exact answer, from JS BigInts: a^b mod m. */
const powMod = (a: bigint, b: bigint, m: bigint) => String(a ** b % m);

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
    // A quotient within mathjs' default 1e-12 of an integer (fast-check's counterexample in CI).
    expect(evaluateExact('mod(2^71, 34477293483)')).toEqual({ ok: true, value: '32577614330' });
    expect(evaluateExact('floor(68485168146.9449)')).toEqual({ ok: true, value: '68485168146' });
    // Past 64 digits, the quotient's own tolerance was a whole unit.
    expect(evaluateExact('mod(3^149, 188556629359)')).toEqual({ ok: true, value: '162579461763' });
    expect(evaluateExact('[mod(-7, 3), mod(7, -3), mod(5.5, 2)]')).toEqual({ ok: true, value: '[2, -2, 1.5]' });
    expect(evaluateExact('floor(10^70/3) mod 10')).toEqual({ ok: true, value: '3' });
    expect(evaluateExact('[2^300, mod(7^100, 13)]')).toMatchObject({ ok: true, value: expect.stringMatching(/, 9\]$/) });
  });

  it('matches BigInt arithmetic for a^b mod m up to 900 digits', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 2n, max: 999n }), fc.bigInt({ min: 1n, max: 300n }), fc.bigInt({ min: 2n, max: 10n ** 12n }), (a, b, m) => {
        expect(evaluateExact(`mod(${a}^${b}, ${m})`)).toEqual({ ok: true, value: powMod(a, b, m) });
      }),
      { numRuns: 150 },
    );
  });

  it('still shows a big result itself rounded to 60 digits, as the number it is', () => {
    expect(evaluateExact('2^300')).toEqual({ ok: true, value: '2.03703597633448608626844568840937816105146839366593625063614e+90' });
    // 1000! = 40238726007709377354370243392300398571937486421071463254379991… (2568 digits), to 60.
    expect(evaluateExact('1000!')).toEqual({ ok: true, value: '4.023872600770937735437024339230039857193748642107146325438e+2567' });
    expect(evaluateExact('2^5000 / 1000')).toMatchObject({ ok: true, value: expect.stringMatching(/e\+1502$/) });
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
