import { describe, expect, it } from 'vitest';
import { fractionPercent, percent } from '../../bench/percent-format.ts';

describe('percent', () => {
  it('prints a value in percent at the precision asked, one decimal by default', () => {
    expect(percent(33.333)).toBe('33.3%');
    expect(percent(33.333, 0)).toBe('33%');
    expect(percent(0.1234, 2)).toBe('0.12%');
    expect(percent(-1.26)).toBe('-1.3%');
  });

  it('prints a value that rounds to zero as 0.0%, never -0.0%', () => {
    expect([-0.04, -0, 0, 0.04].map((v) => percent(v))).toEqual(['0.0%', '0.0%', '0.0%', '0.0%']);
    expect(percent(-0.05)).toBe('-0.1%');
  });

  it('prints "–" where there is no figure, never NaN%', () => {
    for (const v of [NaN, Infinity, -Infinity, undefined]) expect(percent(v)).toBe('–');
  });
});

describe('fractionPercent', () => {
  it('prints a fraction of one as a percentage', () => {
    expect(fractionPercent(0.9995)).toBe('100.0%');
    expect(fractionPercent(0.3333)).toBe('33.3%');
    expect(fractionPercent(-0.0004)).toBe('0.0%');
    expect(fractionPercent(NaN)).toBe('–');
  });
});
