import { describe, expect, it } from 'vitest';
import { fixedDigits, signedDigits } from '../../bench/fixed-digits.ts';

describe('fixedDigits', () => {
  it('prints a value that rounds to zero as 0, not -0', () => {
    expect(fixedDigits(-0.04, 1)).toBe('0.0');
    expect(fixedDigits(-0, 2)).toBe('0.00');
    expect(fixedDigits(-0.05, 1)).toBe('-0.1');
    expect(fixedDigits(12.345, 1)).toBe('12.3');
  });

  it('prints no figure as "–", never NaN or Infinity', () => {
    for (const v of [NaN, Infinity, -Infinity, undefined]) expect(fixedDigits(v, 1)).toBe('–');
  });
});

describe('signedDigits', () => {
  it('signs a difference both ways, and leaves one that rounds to zero unsigned', () => {
    expect([1.184, -0.4, 0, -0.001, 0.004, NaN].map((v) => signedDigits(v, 2))).toEqual(['+1.18', '-0.40', '0.00', '0.00', '0.00', '–']);
  });
});
