import fc from 'fast-check';
import { describe, it } from 'vitest';
import { createParser, withReasoning } from '../../parsers/index.ts';
import { splitInvarianceProperties } from './format-test-kit.ts';

// Magistral's reasoning markers, [THINK] and [/THINK], begin with the "[" that opens a pythonic
// list and Mistral's [TOOL_CALLS]: a marker cut anywhere must be told from both the same way.
const WHOLE = ['[THINK]plan [f(x=1)][/THINK]', '[/THINK]', '[TOOL_CALLS]f[ARGS]{"q": 1}', '[TOOL_CALLS][{"name": "f", "arguments": {}}]', '[f(x=1)]', '[g()]'];
const PIECES = ['[THINK]', '[TH', 'INK]', '[/', '\n', ' ', '[', ']', 'ok', '{', '}', '"'];
const output = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...WHOLE) }, { weight: 2, arbitrary: fc.constantFrom(...PIECES) }, { weight: 1, arbitrary: fc.string({ maxLength: 3 }) }), { maxLength: 8 })
  .map((f) => f.join(''));
const markers = { open: '[THINK]', close: '[/THINK]' };

describe('reasoning with [THINK] markers', () => {
  for (const format of ['mistral', 'pythonic'] as const) {
    for (const startsInReasoning of [false, true]) {
      describe(`${format}${startsInReasoning ? ', pre-opened' : ''}`, () => {
        splitInvarianceProperties(() => withReasoning(createParser(format), { ...markers, startsInReasoning }), output, { runs: 80, malformed: false, minCalls: 10 });
      });
    }
  }
});
