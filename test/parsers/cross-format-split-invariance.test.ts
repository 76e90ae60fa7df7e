import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParser, PARSER_FORMATS, withReasoning } from '../../parsers/index.ts';
import { coalesceText, type ToolCallParser } from '../../parsers/parser-events.ts';
import { withCodeFences } from '../../parsers/with-code-fences.ts';
import { expectWellFormedCalls, feed, feedPush, group, perChar, whole } from './format-test-kit.ts';

// Every format fed every other format's calls and markers, whole pieces and cut ones: models
// mix formats (a Qwen model in a hermes deployment writes XML calls), and prose quotes markers.
// The per-format suites generate their own format; these outputs are what no one designed for.
const CALLS = [
  '<tool_call>\n{"name": "f", "arguments": {"q": "a"}}\n</tool_call>',
  '<tool_call>\n<function=f>\n<parameter=q>\na\n</parameter>\n</function>\n</tool_call>',
  '[TOOL_CALLS] [{"name": "f", "arguments": {"q": 1}}]',
  '[TOOL_CALLS]f[ARGS]{"q": 1}',
  // Arguments written as a string holding the object (Granite 4), decoded when the string closes.
  '<tool_call>\n{"name": "f", "arguments": "{\\"q\\": \\"a\\\\nb\\"}"}\n</tool_call>',
  '[TOOL_CALLS] [{"name": "f", "arguments": "{\\"q\\": [1, \\"\\\\u00e9\\"]}"}]',
  '{"name": "f", "parameters": {"q": 2}}',
  '<|python_tag|>{"name": "f", "parameters": {}}',
  '<|python_tag|>print(1)<|eom_id|>',
  '[f(q=1), g()]',
  "[f(q=x, s=')'), g(q=1)]",
  '<|python_start|>[f(q="x")]<|python_end|>',
  '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"q": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  '<｜tool▁call▁begin｜>f<｜tool▁sep｜>{"q": 4}<｜tool▁call▁end｜>',
  '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"q": 5}<|call|>',
  '<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>',
  '<|from|>assistant\n<|recipient|>f\n<|content|>{"q": 6}\n<|stop|>',
  '>>>f\n{"q": 7}',
  // Raw-code bodies: no closing marker of their own, so end(true) fails them.
  '<|channel|>analysis to=python code<|message|>x = 1\nprint(x)<|call|>',
  '>>>python\nprint(3)\n',
  '<|from|>assistant\n<|recipient|>python\n<|content|>print(4)\n<|stop|>',
  '1. search("x")\n2. join()<END_OF_PLAN>',
  '```python\nprint(2)\n```\n',
  '<think>plan [f(q=1)]</think>',
];
const MARKERS = [
  '<tool_call>', '</tool_call>', '[TOOL_CALLS]', '[ARGS]', '<|python_tag|>', '<function=f>', '<parameter=q>', '</parameter>', '</function>',
  '<｜tool▁call▁begin｜>', '<｜tool▁sep｜>', '<｜tool▁call▁end｜>', '<|channel|>', '<|message|>', '<|call|>', '<|end|>', '>>>', '<|stop|>',
  '<think>', '</think>', '```', '{', '}', '[', ']', '(', ')', '"', "'", '\\', '\n', ' ', ',', ';', '😀', '\uD83D', '\uDE00', 'x', 'f(',
];
const fragment = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...CALLS) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...CALLS), fc.nat()).map(([c, cut]) => c.slice(0, cut % c.length)) },
  { weight: 3, arbitrary: fc.constantFrom(...MARKERS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const outputs = fc.array(fragment, { maxLength: 6 }).map((f) => f.join(''));

function expectSplitInvariant(make: () => ToolCallParser, text: string, sizes: readonly number[]): void {
  const expected = whole(make, text);
  expect(perChar(make, text)).toEqual(expected);
  expect(coalesceText(feed(make, group(text, sizes)))).toEqual(expected);
  // The gateway drives pushFast; push must agree with it.
  expect(coalesceText(feedPush(make, group(text, sizes)))).toEqual(expected);
  expectWellFormedCalls(feed(make, group(text, sizes)));
}

// FUZZ_RUNS=5000 for a longer hunt.
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const sizes = fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 });
const formats = PARSER_FORMATS.filter((f) => f !== 'openai-tool-calls');

describe('every format, fed every format', () => {
  it.each(formats)('%s gives the same events however the text is split', (format) => {
    const make = () => createParser(format);
    fc.assert(
      fc.property(outputs, sizes, (text, s) => expectSplitInvariant(make, text, s)),
      { numRuns: RUNS },
    );
  });

  // As gateway/parser-selection.ts builds them: reasoning outside, fences around the format.
  it.each(formats)('%s inside withCodeFences and withReasoning gives the same events however split', (format) => {
    const make = () => withReasoning(withCodeFences(createParser(format), { callIdPrefix: 'fence_' }), { startsInReasoning: format === 'hermes' });
    fc.assert(
      fc.property(outputs, sizes, (text, s) => expectSplitInvariant(make, text, s)),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

// The token limit's end (end(true)) takes its own paths (a raw-code body or a code block left
// open fails there); they too must not depend on where the deltas fell.
function feedCut(make: () => ToolCallParser, deltas: readonly string[]) {
  const parser = make();
  return coalesceText([...deltas.flatMap((d) => parser.push(d)), ...parser.end(true)]);
}

describe('every format, cut by the token limit', () => {
  it.each(formats)('%s gives the same events at end(true) however the text is split', (format) => {
    const make = () => withReasoning(withCodeFences(createParser(format), { callIdPrefix: 'fence_' }));
    fc.assert(
      fc.property(outputs, sizes, (text, s) => {
        const expected = feedCut(make, [text]);
        expect(feedCut(make, text.split(''))).toEqual(expected);
        expect(feedCut(make, group(text, s))).toEqual(expected);
        expectWellFormedCalls(expected);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
