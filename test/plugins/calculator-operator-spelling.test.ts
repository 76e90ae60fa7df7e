import { describe, expect, it } from 'vitest';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';

// Models copy numbers and operators from typeset text (Unicode minus, ×, ÷) and write Python's
// `**`: mathjs read none of them, and answered "Syntax error in part "− 2"" or "Value expected",
// which did not say which character to change.
describe('calculator operator spellings', () => {
  it('reads the Unicode minus, times and division signs as - * /', () => {
    expect(evaluateExact('3 − 2')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('abs(−5)')).toEqual({ ok: true, value: '5' });
    expect(evaluateExact('2 − −3')).toEqual({ ok: true, value: '5' });
    expect(evaluateExact('2 × 3')).toEqual({ ok: true, value: '6' });
    expect(evaluateExact('2 ⋅ 3 · 4')).toEqual({ ok: true, value: '24' });
    expect(evaluateExact('6 ÷ 4')).toEqual({ ok: true, value: '1.5' });
  });

  it("reads Python's ** as ^, with the same precedence and associativity", () => {
    expect(evaluateExact('2**10')).toEqual({ ok: true, value: '1024' });
    expect(evaluateExact('-2**2')).toEqual({ ok: true, value: '-4' });
    expect(evaluateExact('2**3**2')).toEqual({ ok: true, value: '512' });
    expect(evaluateExact('2 ** -1')).toEqual({ ok: true, value: '0.5' });
  });

  it('leaves string literals as written, and error positions where the model wrote them', () => {
    expect(evaluateExact('"a**b × c"')).toEqual({ ok: true, value: '"a**b × c"' });
    expect(evaluateExact("concat('1 − 2', \"**\")")).toEqual({ ok: true, value: '"1 − 2**"' });
    expect(evaluateExact('2 ** 3 +')).toEqual({ ok: false, error: 'Unexpected end of expression (char 9)' });
  });

  it('says what to write for the typeset comparisons ≤ ≥ ≠ and the root sign √', () => {
    // The regression: "Syntax error in part "≤ 4" (char 3)" alone, with nothing on what mathjs reads
    // instead. They are hinted, not respelt: <= is two characters, and (char n) must stay the model's.
    const comparisons = 'write <=, >= and != for ≤, ≥ and ≠';
    expect(evaluateExact('3 ≤ 4')).toEqual({ ok: false, error: `Syntax error in part "≤ 4" (char 3); ${comparisons}` });
    expect(evaluateExact('3 ≠ 4')).toEqual({ ok: false, error: `Syntax error in part "≠ 4" (char 3); ${comparisons}` });
    expect(evaluateExact('√16')).toEqual({ ok: false, error: 'Syntax error in part "√16" (char 1); write sqrt(x) for √x' });
    expect(evaluateExact('"≤" + 1 +')).toEqual({ ok: false, error: 'Unexpected end of expression (char 10)' });
  });

  it("reads ln as the natural log, and says what to write for Python's // and a thousands separator", () => {
    // The regressions: "Undefined function ln", "Value expected (char 4)" and "Unexpected
    // operator , (char 2)", none of which said what mathjs reads instead.
    expect(evaluateExact('ln(e^3)')).toEqual({ ok: true, value: '3' });
    expect(evaluateExact('7 // 2')).toEqual({ ok: false, error: 'Value expected (char 4); the calculator has no // (floor division): write floor(a / b)' });
    expect(evaluateExact('1,000 + 1')).toEqual({ ok: false, error: 'Unexpected operator , (char 2); write numbers without thousands separators (1000, not 1,000)' });
    // Only an expression that failed gets a hint: max(1,000) is max(1, 0) to mathjs, and "//" in a string is text.
    expect(evaluateExact('max(1,000)')).toEqual({ ok: true, value: '1' });
    expect(evaluateExact('"a//b" +')).toEqual({ ok: false, error: 'Unexpected end of expression (char 9)' });
  });

  // A comma always separates arguments (or a matrix's elements): max(1,000) is max(1, 0), and
  // sum(1,500, 2,300) is 803, with no error to hint from. Reading 1,000 as one number instead would
  // make gcd(120,360) one argument. So the rule is the model's to know before it writes the call.
  it('says in the description the model sees that a comma separates arguments, never thousands', () => {
    expect(evaluateExact('sum(1,500, 2,300)')).toEqual({ ok: true, value: '803' });
    expect(evaluateExact('gcd(120,360)')).toEqual({ ok: true, value: '120' });
    expect(calculator.description).toContain('a comma always separates arguments: write 1000, not 1,000 (max(1,000) is max(1, 0))');
  });
});
