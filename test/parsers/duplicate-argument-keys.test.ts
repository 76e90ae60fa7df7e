import { describe, expect, it } from 'vitest';
import { createOpenAIToolCallsParser } from '../../parsers/formats/openai-tool-calls.ts';
import { createParser, type ParserFormat } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { IncrementalJsonScanner } from '../../parsers/json/incremental-json-scanner.ts';
import { args, expectWellFormedCalls, feed, field, line, malformedOf, start, text, textOf, whole } from './format-test-kit.ts';

// Regression: a key written twice in a call's arguments gave two pieces for one path, the first
// of which a plugin had already acted on (for `code`, a second program run after the first),
// while call-end kept only the last. Now the repeat makes the call malformed.

const parse = (format: ParserFormat, input: string): ParserEvent[] => {
  const events = whole(() => createParser(format), input);
  expectWellFormedCalls(events);
  // However the text is split: the repeat is found at the same character.
  expect(coalesceText(feed(() => createParser(format), input.split('')))).toEqual(events);
  return events;
};

describe('a key written twice in the arguments', () => {
  it('is malformed at its closing quote, after the pieces of the first value, and the text comes back', () => {
    const input = 'Run:<tool_call>{"name": "python", "arguments": {"code": "print(1)\\n", "code": "print(2)\\n"}}</tool_call> done';
    const events = parse('hermes', input);
    expect(events).toEqual([
      text('Run:'),
      start('python'),
      args('{"code": "print(1)\\n'),
      line('print(1)\n', 1),
      args('"'),
      field(['code'], 'print(1)\n'),
      args(', "code'),
      { type: 'malformed', callId: 'call_1', reason: 'malformed JSON: duplicate key "code"' },
      text('<tool_call>{"name": "python", "arguments": {"code": "print(1)\\n", "code": "print(2)\\n"}}</tool_call> done'),
    ]);
    expect(textOf(events)).toBe(input);
  });

  it('is malformed at any depth inside the arguments, but not in keys outside them', () => {
    const nested = '<tool_call>{"name": "f", "arguments": {"o": {"a": 1}, "p": {"a": 2, "b": {"c": 1, "c": 2}}}}</tool_call>';
    expect(malformedOf(parse('hermes', nested))).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'malformed JSON: duplicate key "c"' }]);
    // The same key in sibling objects, and a repeat in a key hermes ignores, are fine.
    const outside = '<tool_call>{"name": "f", "meta": {"a": 1, "a": 2}, "arguments": {"a": [{"a": 1}, {"a": 2}]}}</tool_call>';
    expect(parse('hermes', outside).at(-1)).toEqual({ type: 'call-end', callId: 'call_1', args: { a: [{ a: 1 }, { a: 2 }] } });
  });

  it('is malformed in the formats whose arguments follow the name (JsonArguments), "__proto__" included', () => {
    for (const [format, input] of [
      ['mistral', '[TOOL_CALLS]search[ARGS]{"q": "a", "q": "b"}'],
      ['deepseek-v31', '<｜tool▁call▁begin｜>search<｜tool▁sep｜>{"q": "a", "q": "b"}<｜tool▁call▁end｜>'],
      ['mistral', '[TOOL_CALLS]search[ARGS]{"__proto__": 1, "__proto__": 2}'],
    ] as const) {
      const events = parse(format, input);
      expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringMatching(/^malformed arguments: duplicate key "(q|__proto__)"$/) }]);
      expect(events.some((e) => e.type === 'call-end')).toBe(false);
      expect(textOf(events)).toBe(input);
    }
  });

  it('makes a Llama JSON candidate prose when it comes before the name, like any other syntax error', () => {
    const input = 'x {"parameters": {"q": "a", "q": "b"}, "name": "search"} y';
    expect(parse('llama3-json', input)).toEqual([text(input)]);
  });

  it('is malformed in arguments that an upstream parsed server-side', () => {
    const parser = createOpenAIToolCallsParser();
    const events = [
      ...parser.pushToolCallDelta({ index: 0, id: 'u1', name: 'f', arguments: '{"a": 1, ' }),
      ...parser.pushToolCallDelta({ index: 0, arguments: '"a": 2}' }),
      ...parser.end(),
    ];
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'malformed arguments: duplicate key "a"' }]);
    expect(events.some((e) => e.type === 'call-end')).toBe(false);
  });

  it('is a repeated parameter in qwen3-coder, malformed at the ">" of its second tag', () => {
    const input = '<tool_call>\n<function=f>\n<parameter=q>\na\n</parameter>\n<parameter=q>\nb\n</parameter>\n</function>\n</tool_call>';
    const events = parse('qwen3-coder', input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'qwen3-coder: parameter "q" repeated' }]);
    expect(textOf(events)).toBe(input);
  });
});

describe('incremental JSON scanner: uniqueKeysUnder', () => {
  it('fails a repeated key at its closing quote, only under the given paths', () => {
    const text = '{"x": {"a": 1, "a": 2}, "y": {"a": 1, "a": 2}}';
    const scanner = new IncrementalJsonScanner({ uniqueKeysUnder: [['y']] });
    expect(scanner.write(text)).toBe(text.lastIndexOf('a"') + 1);
    expect(scanner.error).toEqual({ reason: 'duplicate key "a"', at: text.lastIndexOf('a"') + 1 });
  });

  it('keeps the last value by default, as JSON.parse does', () => {
    const scanner = new IncrementalJsonScanner();
    scanner.write('{"a": 1, "a": 2}');
    expect(scanner.value).toEqual({ a: 2 });
  });
});
