import { describe, expect, it } from 'vitest';
import { createParser, withReasoning, type ParserFormat } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, feed, malformedOf, perChar, reasoningOf, textOf, whole } from './format-test-kit.ts';

// Regression: whitespace before an output's first call went out as a content delta while the
// whole-text answer had content null, so stream and non-stream disagreed; whitespace between and
// after calls was frame already (335bea1, 6cb509a, b3ff919).
/** `name`/`args`: the call's (default f, {a: 1}); `lead`: prose that does not start a call before it (default 'Sure. '); `broken`: none where only a cut output breaks a call. */
const cases: Array<{ format: ParserFormat; call: string; broken?: string; name?: string; args?: Record<string, unknown>; lead?: string }> = [
  { format: 'hermes', call: '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', broken: '<tool_call>\n{"name": "f", "arguments": {"a": }}\n</tool_call>' },
  { format: 'mistral', call: '[TOOL_CALLS]f[ARGS]{"a": 1}', broken: '[TOOL_CALLS]f[ARGS]{"a": }' },
  { format: 'mistral', call: '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}]', broken: '[TOOL_CALLS] [{"name": "f", "arguments": {"a": }}]' },
  {
    format: 'deepseek-v3',
    call: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    broken: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{"a": }\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
  },
  { format: 'llama3-json', call: '{"name": "f", "parameters": {"a": 1}}', broken: '{"name": "f", "parameters": {"a": }}' },
  // The formats whose parsers are not FormatParsers, with the same filter on their own events.
  // A list starts a call only at the start of a line.
  { format: 'pythonic', call: '[f(a=1)]', broken: '[f(a=)]', lead: 'Sure.\n' },
  {
    format: 'qwen3-coder',
    call: '<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>',
    broken: '<tool_call>\n<function=f>\nhello\n</function>\n</tool_call>',
    args: { a: '1' },
  },
  { format: 'python-tag', call: '<|python_tag|>print(1)<|eom_id|>', name: 'python', args: { code: 'print(1)' } },
];

/** Whole, at every 2-way split and char by char: the same events. */
const everySplit = (make: () => ReturnType<typeof createParser>, input: string) => {
  const expected = whole(make, input);
  expectWellFormedCalls(expected);
  for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make, [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
  expect(perChar(make, input)).toEqual(expected);
  return expected;
};

describe('whitespace at the start of the output', () => {
  for (const { format, call, broken, name = 'f', args = { a: 1 }, lead = 'Sure. ' } of cases) {
    const make = () => createParser(format);
    it(`${format}: is frame before a call, in every split (${call.slice(0, 16)}…)`, () => {
      for (const ws of ['\n\n', ' ', ' \n\t ']) {
        const events = everySplit(make, `${ws}${call}`);
        expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([[name, args]]);
        expect(textOf(events)).toBe('');
        expect(textOf(everySplit(make, `${ws}${call}\nDone.`))).toBe('\nDone.');
      }
    });

    it(`${format}: goes out unchanged with prose, a broken call, or alone (${call.slice(0, 16)}…)`, () => {
      expect(textOf(everySplit(make, '\n\nHello.'))).toBe('\n\nHello.');
      expect(textOf(everySplit(make, ` \n${lead}${call}`))).toBe(` \n${lead}`);
      // Whitespace alone is the answer, as the gateway's non-stream path keeps it.
      expect(textOf(everySplit(make, ' \n '))).toBe(' \n ');
      if (broken === undefined) return;
      const events = everySplit(make, `\n ${broken}`);
      expect(malformedOf(events)).toHaveLength(1);
      expect(textOf(events)).toBe(`\n ${broken}`);
    });
  }

  it('after a reasoning block, is frame before a call too (vLLM strips it)', () => {
    const make = () => withReasoning(createParser('hermes'));
    const call = cases[0]!.call;
    const events = everySplit(make, `<think>Call f.</think>\n\n${call}`);
    expect(reasoningOf(events)).toBe('Call f.');
    expect(textOf(events)).toBe('');
    expect(callsOf(events)).toHaveLength(1);
    expect(textOf(everySplit(make, '\n<think>Hm.</think>\n\nHello.'))).toBe('\n\n\nHello.');
    expect(textOf(everySplit(make, `\n<think>Hm.</think>\n\n${call}`))).toBe('');
  });

  it('after a reasoning block, is frame before a call in a format not built on FormatParser too', () => {
    const make = () => withReasoning(createParser('qwen3-coder'));
    const call = cases.find((c) => c.format === 'qwen3-coder')!.call;
    const events = everySplit(make, `<think>Call f.</think>\n\n${call}`);
    expect(reasoningOf(events)).toBe('Call f.');
    expect(textOf(events)).toBe('');
    expect(callsOf(events)).toHaveLength(1);
    expect(textOf(everySplit(make, '<think>Hm.</think>\n\nHello.'))).toBe('\n\nHello.');
  });
});
