import { describe, expect, it } from 'vitest';
import { asciiDecimalDigits } from '../../parsers/formats/python-decimal-digits.ts';

describe('asciiDecimalDigits', () => {
  it("writes each script's digits as ASCII ones, as Python's int() reads them", () => {
    // Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Thai, fullwidth.
    expect(asciiDecimalDigits('٠١٢٣٤٥٦٧٨٩ ۰۱۲۳۴۵۶۷۸۹ ०१२३४५६७८९ ০১২৩৪৫৬৭৮৯ ๐๑๒๓๔๕๖๗๘๙ ０１２３４５６７８９')).toBe(
      '0123456789 0123456789 0123456789 0123456789 0123456789 0123456789',
    );
  });

  it('counts from the start of each set where several sets of ten follow each other (the mathematical digits)', () => {
    // U+1D7CE..U+1D7FF: bold, double-struck, sans-serif, sans-serif bold, monospace, each 0-9.
    const all = Array.from({ length: 50 }, (_, i) => String.fromCodePoint(0x1d7ce + i)).join('');
    expect(asciiDecimalDigits(all)).toBe('0123456789'.repeat(5));
  });

  it('leaves everything else as it is', () => {
    expect(asciiDecimalDigits('-12.5e3_0 x٤y')).toBe('-12.5e3_0 x4y');
    expect(asciiDecimalDigits('½ ² Ⅻ 一')).toBe('½ ² Ⅻ 一');
  });
});
