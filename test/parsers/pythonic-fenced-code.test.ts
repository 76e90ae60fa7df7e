import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPythonicParser } from '../../parsers/formats/pythonic-parser.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { callsOf, feed, group, malformedOf, textOf, whole } from './format-test-kit.ts';

const make = () => createPythonicParser();

// Lines a code block holds that read as a call list outside one.
const codeLine = fc.constantFrom(
  '[Point(x=0, y=0), Point(x=1, y=0)],',
  '    [dict(a=1), dict(b=2)]',
  '[f(x=1)]',
  '[g()]',
  'rows = [row(id=1)]',
  '',
  '  ~~ not a fence',
  // A closing fence has no info string: this one closes nothing.
  '```` not closing',
);
const fence = fc.constantFrom(['```python', '```'], ['~~~', '~~~'], ['  ```', '```'], ['````py', '````']);
const block = fc.tuple(fence, fc.array(codeLine, { maxLength: 5 })).map(([[open, close], lines]) => [open, ...lines, close].join('\n'));

describe('pythonic parser: fenced code blocks', () => {
  it('reads no call inside a fenced block however it is split, and a list after it still calls', () => {
    fc.assert(
      fc.property(block, fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }), (code, sizes) => {
        const input = `Here:\n${code}\n[after(x=1)]`;
        const expected = whole(make, input);
        expect(callsOf(expected).map((c) => c.name)).toEqual(['after']);
        expect(malformedOf(expected)).toEqual([]);
        expect(textOf(expected)).toBe(input.replace('[after(x=1)]', ''));
        expect(coalesceText(feed(make, group(input, sizes)))).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('still takes a list right after a wrapper token there: a special token is no code\'s', () => {
    const input = '```\n<|python_start|>[f(x=1)]<|python_end|>\n[g(x=2)]\n```';
    for (const events of [whole(make, input), coalesceText(feed(make, input.split('')))]) {
      expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
      expect(textOf(events)).toBe('```\n\n[g(x=2)]\n```');
    }
  });
});
