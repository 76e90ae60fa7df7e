import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createCodeFenceParser } from '../../parsers/code-fence-parser.ts';
import { createPythonicParser } from '../../parsers/formats/pythonic-parser.ts';
import { createQwen3CoderParser } from '../../parsers/formats/qwen3-coder-parser.ts';
import { withReasoning, type ReasoningOptions } from '../../parsers/formats/reasoning-wrapper.ts';
import { createParser, withReasoning as exportedWithReasoning } from '../../parsers/index.ts';
import { callsOf, expectWellFormedCalls, feed, reasoning, reasoningOf, splitInvarianceProperties, text, textOf, whole } from './format-test-kit.ts';

const pythonic = (options?: ReasoningOptions) => () => withReasoning(createPythonicParser(), options);
const parse = (make: () => ReturnType<typeof withReasoning>, input: string) => {
  const events = whole(make, input);
  expectWellFormedCalls(events);
  return events;
};

describe('reasoning wrapper', () => {
  it('routes the <think> block to reasoning and the rest to the inner parser', () => {
    const events = parse(pythonic(), "<think>\nThe user wants the weather.\n</think>\n\n[get_weather(city='Paris')]");
    // The newlines between the block and the call are frame, as before any call.
    expect(events.slice(0, 2)).toEqual([reasoning('\nThe user wants the weather.\n'), { type: 'call-start', callId: 'call_1', name: 'get_weather' }]);
    expect(textOf(events)).toBe('');
    expect(callsOf(events).map((c) => c.args)).toEqual([{ city: 'Paris' }]);
  });

  it('starts inside reasoning when the prompt pre-opened the block (DeepSeek-R1, Qwen3)', () => {
    const events = parse(pythonic({ startsInReasoning: true }), 'Okay, so 2+2.\n</think>\n\nIt is 4.');
    expect(events).toEqual([reasoning('Okay, so 2+2.\n'), text('\n\nIt is 4.')]);
    expect(parse(pythonic({ startsInReasoning: true }), '<think>\nHmm.</think>4')).toEqual([reasoning('\nHmm.'), text('4')]);
  });

  it('reads everything as the answer once told the upstream split the reasoning off, a prompt-opened block or not', () => {
    const parser = withReasoning(createPythonicParser(), { startsInReasoning: true });
    parser.upstreamSplitsReasoning?.();
    const events = [...parser.push("[get_weather(city='Pa"), ...parser.push("ris')]"), ...parser.end()];
    expect(reasoningOf(events)).toBe('');
    expect(callsOf(events).map((c) => c.args)).toEqual([{ city: 'Paris' }]);
    const answer = withReasoning(createPythonicParser(), { startsInReasoning: true });
    answer.upstreamSplitsReasoning?.();
    expect(textOf([...answer.push('It is 4.'), ...answer.end()])).toBe('It is 4.');
    // Told after the output began, it changes nothing: the output has been read one way.
    const late = withReasoning(createPythonicParser(), { startsInReasoning: true });
    const first = late.push('Hmm.');
    late.upstreamSplitsReasoning?.();
    expect(reasoningOf([...first, ...late.push('</think>4'), ...late.end()])).toBe('Hmm.');
  });

  it('keeps a tool call written inside the block as reasoning, never as a call', () => {
    const input = '<think>I could call [get_weather(city="Rome")] or <tool_call>\n<function=f>\n</function>\n</tool_call>.</think>[get_weather(city="Paris")]';
    const events = parse(pythonic(), input);
    expect(reasoningOf(events)).toBe('I could call [get_weather(city="Rome")] or <tool_call>\n<function=f>\n</function>\n</tool_call>.');
    expect(callsOf(events).map((c) => c.args)).toEqual([{ city: 'Paris' }]);
    const qwen = parse(() => withReasoning(createQwen3CoderParser()), input);
    expect(callsOf(qwen)).toEqual([]);
    expect(textOf(qwen)).toBe('[get_weather(city="Paris")]');
  });

  it('treats only a block at the start as reasoning: later markers are the inner parser text', () => {
    expect(parse(pythonic(), 'Answer first. <think>not reasoning</think>')).toEqual([text('Answer first. <think>not reasoning</think>')]);
    expect(parse(pythonic(), '<think>a</think>b<think>c</think>')).toEqual([reasoning('a'), text('b<think>c</think>')]);
    // Whitespace before the block goes to the inner parser, which holds it until it knows whether a call
    // follows (then it is frame): here prose does, so it comes out with it, after the reasoning.
    expect(parse(pythonic(), '\n <think>a</think>b')).toEqual([reasoning('a'), text('\n b')]);
  });

  it('holds a marker split across deltas, and releases a near miss', () => {
    const parser = withReasoning(createCodeFenceParser());
    expect(parser.push('<thi')).toEqual([]);
    expect(parser.push('nk>idea</thi')).toEqual([reasoning('idea')]);
    expect(parser.push('nk>Done')).toEqual([text('Done')]);
    const other = withReasoning(createCodeFenceParser());
    expect(other.push('<thi')).toEqual([]);
    expect(other.push('s is text')).toEqual([text('<this is text')]);
  });

  it('keeps reasoning cut off by the end as reasoning, and ends the inner parser', () => {
    expect(parse(pythonic(), '<think>still thinking</thi')).toEqual([reasoning('still thinking</thi')]);
    const events = parse(() => withReasoning(createCodeFenceParser(), { startsInReasoning: true }), 'hm</think>\n```python\nx = 1\n');
    expect(events.slice(0, 2)).toEqual([reasoning('hm'), text('\n```python\n')]);
    expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'x = 1\n' }]);
  });

  it('takes custom markers, is exported from parsers/index.ts and validates its options', () => {
    const events = parse(() => exportedWithReasoning(createParser('pythonic'), { open: '<|thought|>', close: '<|/thought|>' }), '<|thought|>hm<|/thought|>ok');
    expect(events).toEqual([reasoning('hm'), text('ok')]);
    expect(() => withReasoning(createPythonicParser(), { open: '' })).toThrow(InvalidRequestError);
  });
});

const fragments = ['<think>', '</think>', '<thi', 'nk>', '</', 'think', '\n', ' ', 'idea ', '[f(x=1)]', '[f(x=1)]', '[g(y="a")]', '[g(', 'y="a")]', '😀', '\uD83D', '\uDE00', '<', '>'];
const modelOutput = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 25 })
  .map((p) => p.join(''));

describe('reasoning wrapper: properties', () => {
  splitInvarianceProperties(pythonic(), modelOutput, { runs: 100, malformed: false });

  describe('starting in reasoning', () => {
    const output = fc.tuple(fc.constantFrom('', 'thinking ', '</think>', 'hm</think>', '</th'), modelOutput).map(([a, b]) => a + b);
    splitInvarianceProperties(pythonic({ startsInReasoning: true }), output, { runs: 60, malformed: false, minCalls: 10 });
  });

  it('loses and repeats nothing: the block is exactly the reasoning, the rest exactly the content', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('<', '/', 't', 'h', 'i', 'n', 'k', '>', 'x', ' ', '\n'), maxLength: 40 }), (input) => {
        const events = feed(() => withReasoning(createCodeFenceParser()), input.split(''));
        const lead = /^[ \t\r\n]*<think>/.exec(input);
        let expectedReasoning = '';
        let expectedText = input;
        if (lead) {
          const ws = lead[0].slice(0, -'<think>'.length);
          const rest = input.slice(lead[0].length);
          const close = rest.indexOf('</think>');
          expectedReasoning = close === -1 ? rest : rest.slice(0, close);
          expectedText = ws + (close === -1 ? '' : rest.slice(close + '</think>'.length));
        }
        expect(reasoningOf(events)).toBe(expectedReasoning);
        expect(textOf(events)).toBe(expectedText);
      }),
      { numRuns: 200 },
    );
  });
});
