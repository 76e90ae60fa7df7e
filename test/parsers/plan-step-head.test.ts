import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PlanStepHead } from '../../parsers/formats/plan-step-head.ts';

// The regexes the plan parser once tested every line with, again on each delta.
const STEP_PREFIX = /^[ \t]*(?:\d+(?:\.[ \t]*(?:[A-Za-z_]\w*)?)?)?$/;
const STEP_HEAD = /^[ \t]*\d+\.[ \t]*[A-Za-z_]\w*\(/;

const expected = (line: string) => (STEP_HEAD.test(line) ? 'head' : STEP_PREFIX.test(line) ? 'prefix' : 'text');

describe('PlanStepHead', () => {
  it('reads a line as the regexes of a step head and its prefixes do, however the line arrives', () => {
    const char = fc.constantFrom(' ', '\t', '1', '7', '.', 'a', 'Z', '_', '9', '(', ')', '-', '\r', 'é');
    fc.assert(
      fc.property(fc.array(fc.array(char, { maxLength: 6 }).map((cs) => cs.join('')), { maxLength: 6 }), (pieces) => {
        const head = new PlanStepHead();
        let line = '';
        let verdict: string = 'prefix';
        for (const piece of pieces) {
          line += piece;
          verdict = head.feed(piece);
          expect(verdict).toBe(expected(line));
          if (verdict !== 'prefix') break;
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('decides the plain cases', () => {
    const read = (line: string) => new PlanStepHead().feed(line);
    expect(read('  12. search(')).toBe('head');
    expect(read('1.\tjoin(')).toBe('head');
    expect(read('1. search')).toBe('prefix');
    expect(read(' '.repeat(10_000))).toBe('prefix');
    expect(read('Thought: 1. search(')).toBe('text');
    expect(read('1 . search(')).toBe('text');
    expect(read('.5')).toBe('text');
  });
});
