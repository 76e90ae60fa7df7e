import { describe, expect, it } from 'vitest';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

// pi is kept to 64 digits, so sin(pi) answered 3.078…e-64 and tan(pi/2) 7071067811865475244008443621048490392.8…:
// the argument's own rounding, shown to the model (or a plan's $n) as if it were the value.
describe('calculator: trigonometry at a zero of the function', () => {
  it('answers 0 where the result is below what the argument’s rounding can tell from zero', () => {
    expect(evaluateExact('sin(pi)')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('cos(pi/2)')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('sin(100 * pi)')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('tan(pi)')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('sin(pi) * 10^70')).toEqual({ ok: true, value: '0' });
  });

  it('says tan(pi/2) has no value rather than a huge one', () => {
    expect(evaluateExact('tan(pi/2)')).toMatchObject({ ok: false, error: expect.stringContaining('Infinity') });
  });

  // cot, sec and csc were mathjs' own: cot(pi/2) answered 1.41…e-37, csc(pi) 3.25…e+63, sec(pi/2) 6.5e+63.
  it('treats cot, sec and csc as cos/sin, 1/cos and 1/sin: 0 at a zero, no value at a pole', () => {
    expect(evaluateExact('cot(pi/2)')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('cot(3*pi/2)')).toEqual({ ok: true, value: '0' });
    for (const expression of ['cot(pi)', 'csc(pi)', 'sec(pi/2)', 'csc(100 * pi)', 'cot(0)']) {
      expect(evaluateExact(expression), expression).toMatchObject({ ok: false, error: expect.stringContaining('Infinity') });
    }
    expect(evaluateExact('cot(pi/4)')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('sec(pi)')).toEqual({ ok: true, value: '-1' });
    expect(evaluateExact('sec(pi/3)')).toEqual({ ok: true, value: '2' });
    expect(evaluateExact('csc(pi/6)')).toEqual({ ok: true, value: '2' });
    expect(evaluateExact('csc(pi/2)')).toEqual({ ok: true, value: '1' });
  });

  it('keeps small values that are values', () => {
    expect(evaluateExact('sin(1e-70)')).toEqual({ ok: true, value: '1e-70' });
    expect(evaluateExact('sin(pi/6)')).toEqual({ ok: true, value: '0.5' });
    expect(evaluateExact('tan(pi/4)')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('sqrt(2) * 1e-70')).toMatchObject({ ok: true, value: expect.stringMatching(/^1\.414.*e-70$/) });
    expect(evaluateExact('1/3*3 - 1')).toEqual({ ok: true, value: '-1e-64' });
  });
});
