import { describe, expect, it } from 'vitest';
import { createPythonicParser } from '../../parsers/formats/pythonic-parser.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, feed, group, malformedOf, perChar, textOf, whole } from './format-test-kit.ts';

// A call list followed by "\n" and the end of the output (or by another list) streamed that "\n"
// as a content delta, where vLLM's pythonic parser has no content at all (ast.parse takes the
// whole output as the list). Whitespace after a list whose calls ran is formatting, as after a
// hermes </tool_call>: frame before another call list or the output's end, else content with
// what follows.
const make = () => createPythonicParser();

function parse(input: string) {
  const events = whole(make, input);
  expectWellFormedCalls(events);
  expect(perChar(make, input)).toEqual(events);
  expect(coalesceText(feed(make, group(input, [2, 1, 5])))).toEqual(events);
  return events;
}

describe('pythonic: whitespace after a call list', () => {
  it('is frame at the output end, after the wrapper token too', () => {
    for (const input of ['[f(x=1)]\n', '[f(x=1)] \n\n', '<|python_start|>[f(x=1)]<|python_end|>\n', '[f(x=1)]\n<|python_end|>']) {
      const events = parse(input);
      expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
      expect(textOf(events)).toBe('');
    }
  });

  it('is frame before another call list', () => {
    const events = parse('[f(x=1)]\n\n[g(y=2)]\n');
    expect(callsOf(events).map((c) => c.name)).toEqual(['f', 'g']);
    expect(textOf(events)).toBe('');
  });

  it('goes out with the text after it, and with a bracket or list that turns out prose', () => {
    expect(textOf(parse('[f(x=1)]\n\nDone.'))).toBe('\n\nDone.');
    expect(textOf(parse('[f(x=1)]\n[1] note'))).toBe('\n[1] note');
    expect(textOf(parse('[f(x=1)]\n[g(y=foo)]'))).toBe('\n[g(y=foo)]');
    const cut = parse('[f(x=1)]\n[g(y=1');
    expect(malformedOf(cut)).toHaveLength(1);
    expect(textOf(cut)).toBe('\n[g(y=1');
  });

  it('is content after a list none of whose calls ran, as the list is', () => {
    expect(textOf(parse('[f(x=foo)]\n'))).toBe('[f(x=foo)]\n');
  });

  // Regression: `[f(x=1)];` streamed `;` as content beside the call. vLLM's pythonic parser has
  // none (ast.parse reads `;` as the statement's end: content null, streamed or whole), and a `;`
  // closing the calls is the llama3-json format's habit, which llama3-json already takes as frame.
  it("takes one semicolon on the list's line, then whitespace, as frame", () => {
    for (const input of ['[f(x=1)];', '[f(x=1)];\n', '[f(x=1)] ;\n<|python_end|>', '[f(x=1)];\n\n[g(y=2)]']) {
      const events = parse(input);
      expect(callsOf(events).length).toBeGreaterThan(0);
      expect(textOf(events)).toBe('');
    }
  });

  it('keeps the semicolon as content before text, or written twice or on a later line', () => {
    expect(textOf(parse('[f(x=1)]; Done.'))).toBe('; Done.');
    expect(textOf(parse('[f(x=1)];;'))).toBe(';;');
    expect(textOf(parse('[f(x=1)]\n;'))).toBe('\n;');
    expect(textOf(parse('[f(x=foo)];'))).toBe('[f(x=foo)];');
  });
});
