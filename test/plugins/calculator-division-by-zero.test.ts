import { describe, expect, it } from 'vitest';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

// mathjs' mod(x, 0) is x (its documented convention): `5 mod 0` answered 5, a silent value the model
// (or a plan's $n) took for a remainder. Python raises ZeroDivisionError; so does the calculator now.
describe('calculator: division by zero is an error the model can act on', () => {
  it('refuses a remainder by zero, however it is written', () => {
    for (const expression of ['5 mod 0', 'mod(5, 0)', '5 % 0', 'mod(7^100, 0)', '[mod(1, 2), mod(3, 0)]']) {
      expect(evaluateExact(expression)).toEqual({ ok: false, error: 'division by zero: the remainder of x mod 0 is undefined' });
    }
  });

  it('keeps remainders by anything else, and a zero dividend', () => {
    expect(evaluateExact('0 mod 5')).toEqual({ ok: true, value: '0' });
    expect(evaluateExact('-5 mod 3')).toEqual({ ok: true, value: '1' });
  });

  it('says a division by zero is one, not Infinity', () => {
    for (const expression of ['5 / 0', '-5 / 0']) {
      expect(evaluateExact(expression)).toMatchObject({ ok: false, error: expect.stringContaining('a division by zero') });
    }
    expect(evaluateExact('0 / 0')).toMatchObject({ ok: false, error: expect.stringContaining('0/0') });
  });
});
