import { describe, expect, it } from 'vitest';
import { createQwen3CoderParser } from '../../parsers/formats/qwen3-coder-parser.ts';
import { callsOf, expectWellFormedCalls, group, feed, malformedOf, perChar, textOf, whole } from './format-test-kit.ts';
import { coalesceText } from '../../parsers/parser-events.ts';

// Qwen3-Coder's chat template writes parallel calls as one <tool_call> block each, joined by
// "\n", and models end the last with "\n" too. That whitespace is formatting, not an answer: vLLM's
// qwen3_coder has none of it in content (content null), as ours has none for hermes. It was content
// ("\n"), so a parallel-call answer had content "\n" instead of null.
const make = () => createQwen3CoderParser();
const block = (name: string, value: string) => `<tool_call>\n<function=${name}>\n<parameter=a>\n${value}\n</parameter>\n</function>\n</tool_call>`;

function parse(input: string) {
  const events = whole(make, input);
  expectWellFormedCalls(events);
  expect(perChar(make, input)).toEqual(events);
  expect(coalesceText(feed(make, group(input, [3, 1, 5])))).toEqual(events);
  return events;
}

describe('qwen3-coder: whitespace between and after <tool_call> blocks', () => {
  it('is frame between two blocks and after the last', () => {
    const events = parse(`${block('f', '1')}\n${block('g', '2')}\n`);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['f', { a: '1' }], ['g', { a: '2' }]]);
    expect(textOf(events)).toBe('');
  });

  it('is frame before a bare <function= call, and after a call whose </tool_call> is missing', () => {
    const events = parse(`${block('f', '1')}\n\n<function=g>\n<parameter=a>\n2\n</parameter>\n</function>\n`);
    expect(callsOf(events).map((c) => c.name)).toEqual(['f', 'g']);
    expect(textOf(events)).toBe('');
  });

  it('goes out with the text that follows it, unchanged', () => {
    const events = parse(`${block('f', '1')}\n\nDone.`);
    expect(textOf(events)).toBe('\n\nDone.');
  });

  it('goes out with a marker that turns out to be prose, or a call that breaks', () => {
    expect(textOf(parse(`${block('f', '1')}\n<tool_call> is the tag`))).toBe('\n<tool_call> is the tag');
    expect(textOf(parse(`${block('f', '1')}\n<function=g> is a tag`))).toBe('\n<function=g> is a tag');
    const broken = parse(`${block('f', '1')}\n<tool_call>\n<function=g>\nno\n</function>\n</tool_call>`);
    expect(malformedOf(broken)).toHaveLength(1);
    expect(textOf(broken)).toBe('\n<tool_call>\n<function=g>\nno\n</function>\n</tool_call>');
    expect(textOf(parse(`${block('f', '1')}\n<tool_c`))).toBe('\n<tool_c');
  });
});
