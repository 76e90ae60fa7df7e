import { describe, expect, it } from 'vitest';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

// "10% of 200" is how a model (and its user) writes a percentage; mathjs answered "Undefined symbol
// of", which said nothing about `%`. What % means is mathjs' own (a number's percent, a shop
// calculator's a + b%, a remainder between two operands), pinned here as the README states it.
describe('calculator percent', () => {
  it("reads 'N% of X' as N% * X", () => {
    expect(evaluateExact('10% of 200')).toEqual({ ok: true, value: '20' });
    expect(evaluateExact('15 % of 80')).toEqual({ ok: true, value: '12' });
    expect(evaluateExact('2.5%of 1000')).toEqual({ ok: true, value: '25' });
    // Text is text, and `of` anywhere else is still an unknown symbol.
    expect(evaluateExact('"10% of 200"')).toEqual({ ok: true, value: '"10% of 200"' });
    expect(evaluateExact('half of 200')).toMatchObject({ ok: false });
  });

  it('keeps mathjs’ meaning of % otherwise: a percent after a number, a remainder between two', () => {
    expect(evaluateExact('15%')).toEqual({ ok: true, value: '0.15' });
    expect(evaluateExact('10% * 200')).toEqual({ ok: true, value: '20' });
    expect(evaluateExact('200 + 10%')).toEqual({ ok: true, value: '220' });
    expect(evaluateExact('200 - 15%')).toEqual({ ok: true, value: '170' });
    expect(evaluateExact('10 % 3')).toEqual({ ok: true, value: '1' });
  });

  it('says in the description the model sees what % means', () => {
    expect(calculator.description).toContain('after a number % is percent (10% of 200 is 20, 200 + 10% is 220), between two numbers the remainder (10 % 3 is 1)');
  });
});
