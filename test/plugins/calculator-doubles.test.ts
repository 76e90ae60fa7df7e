import { describe, expect, it } from 'vitest';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

// Plain numbers are BigNumbers (64 digits computed, 60 shown), so 0.1*3*10 and sqrt(2)^2 were
// already 3 and 2. A complex number's parts and number(x) are doubles, and were shown with all
// their ~17 digits: their rounding, and past 2^53 digits a double does not have.
describe('calculator: doubles (complex parts, number(x)) shown to their own precision', () => {
  it('keeps near-integer BigNumber results as the integer and real fractions as they are', () => {
    expect(evaluateExact('0.1*3*10')).toEqual({ ok: true, value: '3' });
    expect(evaluateExact('sqrt(2)^2')).toEqual({ ok: true, value: '2' });
    expect(evaluateExact('1e16+1')).toEqual({ ok: true, value: '10000000000000001' });
    expect(evaluateExact('1+1e-50')).toEqual({ ok: true, value: '1.00000000000000000000000000000000000000000000000001' });
    expect(evaluateExact('10^70+0.5')).toEqual({ ok: true, value: '1e+70' });
  });

  it('shows a double that rounds to an integer within its noise as that integer (was -2.0000000000000004)', () => {
    expect(evaluateExact('sqrt(-2)^2')).toEqual({ ok: true, value: '-2' });
    expect(evaluateExact('number(0.1) + number(0.2)')).toEqual({ ok: true, value: '0.3' });
    expect(evaluateExact('number(0.1) * 3 * number(10)')).toEqual({ ok: true, value: '3' });
  });

  it('keeps a double that is not an integer at the digits it shows (sqrt(-2) is not 1.41421356237i rounded up)', () => {
    expect(evaluateExact('sqrt(-2)')).toEqual({ ok: true, value: '1.41421356237i' });
    expect(evaluateExact('number(1.000001)')).toEqual({ ok: true, value: '1.000001' });
    expect(evaluateExact('complex(2.5, -0.125)')).toEqual({ ok: true, value: '2.5 - 0.125i' });
  });

  it('writes a double past its digits with an exponent, not fake exact digits (was 1152921504606847000)', () => {
    expect(evaluateExact('number(2^60)')).toEqual({ ok: true, value: '1.15292150461e+18' });
    expect(evaluateExact('(2+0i)^100')).toEqual({ ok: true, value: '1.26765060023e+30' });
    // 2^60 as a BigNumber is exact, and shown in full.
    expect(evaluateExact('2^60')).toEqual({ ok: true, value: '1152921504606846976' });
  });

  it('shows a complex power with integer parts as integers (was -10.999999999999998 - 1.9999999999999964i)', () => {
    expect(evaluateExact('(1+2i)^3')).toEqual({ ok: true, value: '-11 - 2i' });
    expect(evaluateExact('(1+2i)^10')).toEqual({ ok: true, value: '237 - 3116i' });
    expect(evaluateExact('sqrt(-4)')).toEqual({ ok: true, value: '2i' });
  });

  it('drops a complex part that is the other part’s rounding (e^(i*pi) was -1 + 0.00000000000000012246467991473532i)', () => {
    expect(evaluateExact('e^(i*pi)')).toEqual({ ok: true, value: '-1' });
    expect(evaluateExact('exp(i*pi/2)')).toEqual({ ok: true, value: 'i' });
    // -2^50: the real part was -1125899906842625, off by one and shown as exact, beside a 0.55i of noise.
    expect(evaluateExact('(1+i)^100')).toEqual({ ok: true, value: '-1.12589990684e+15' });
    // Both parts small is not noise: each is kept.
    expect(evaluateExact('complex(1e-30, 1e-30)')).toEqual({ ok: true, value: '1e-30 + 1e-30i' });
  });

  it('rounds the complex parts inside a matrix or an object too, and leaves BigNumbers beside them at 60 digits', () => {
    expect(evaluateExact('[(1+2i)^3, 1/3]')).toEqual({ ok: true, value: '[-11 - 2i, 0.333333333333333333333333333333333333333333333333333333333333]' });
    expect(evaluateExact('{a: e^(i*pi), b: 2^100}')).toEqual({ ok: true, value: '{"a": -1, "b": 1267650600228229401496703205376}' });
  });

  it('shows units as plain numbers: BigNumber magnitudes at 60 digits, double ones at 12', () => {
    expect(evaluateExact('5 cm + 2 inch')).toEqual({ ok: true, value: '10.08 cm' });
    expect(evaluateExact('100 km/h to m/s')).toEqual({ ok: true, value: '27.7777777777777777777777777777777777777777777777777777777778 m / s' });
    expect(evaluateExact('100/3.6')).toEqual({ ok: true, value: '27.7777777777777777777777777777777777777777777777777777777778' });
    expect(evaluateExact('number(0.1) m + number(0.2) m')).toEqual({ ok: true, value: '0.3 m' });
  });
});
