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

  it('keeps small values that are values', () => {
    expect(evaluateExact('sin(1e-70)')).toEqual({ ok: true, value: '1e-70' });
    expect(evaluateExact('sin(pi/6)')).toEqual({ ok: true, value: '0.5' });
    expect(evaluateExact('tan(pi/4)')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('sqrt(2) * 1e-70')).toMatchObject({ ok: true, value: expect.stringMatching(/^1\.414.*e-70$/) });
    expect(evaluateExact('1/3*3 - 1')).toEqual({ ok: true, value: '-1e-64' });
  });
});
