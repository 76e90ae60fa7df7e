import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLlama3JsonParser, type Llama3JsonParserOptions } from '../../parsers/formats/llama3-json-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, malformedOf, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const make = (options?: Llama3JsonParserOptions) => () => createLlama3JsonParser(options);
const parse = (input: string, options?: Llama3JsonParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

describe('llama3-json parser: calls', () => {
  it('streams a call at the start of the output', () => {
    expect(parse('{"name": "searchTool", "parameters": {"query": "rust borrow checker", "limit": 5}}')).toEqual([
      start('searchTool'),
      args('{"query": "rust borrow checker"'),
      field(['query'], 'rust borrow checker'),
      args(', "limit": 5'),
      field(['limit'], 5),
      args('}'),
      end({ query: 'rust borrow checker', limit: 5 }),
    ]);
  });

  it('finds a call inside prose and keeps the prose around it', () => {
    const events = parse('Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?');
    expect(events).toEqual([
      text('Here is the result: '),
      start('getOpenIncidentsTool'),
      args('{}'),
      end({}),
      text(' Would you like to know more?'),
    ]);
  });

  it('splits calls separated by ";" or newlines, the separators being frame', () => {
    const input = '{"name": "a", "parameters": {"q": "x"}}; {"name": "b", "arguments": {}};\n{"name": "c", "parameters": {}}\n{"type": "function", "name": "d", "parameters": {"n": 1}}';
    const events = parse(input);
    expect(callsOf(events).map((c) => [c.name, c.argsText])).toEqual([
      ['a', '{"q": "x"}'],
      ['b', '{}'],
      ['c', '{}'],
      ['d', '{"n": 1}'],
    ]);
    expect(textOf(events)).toBe('');
  });

  it("finds a call whose brace a failed candidate swallowed, in every split (fast-check's counterexample)", () => {
    // The prose's `{"` opens a candidate whose key string runs to the call's own `{"`: the candidate
    // fails at `name`, and the call is read again from its brace.
    const input = '{"Sure, checking now.{"name": "get_weather", "parameters": {}}';
    const expected = [text('{"Sure, checking now.'), start('get_weather'), args('{}'), end({})];
    expect(parse(input)).toEqual(expected);
    expect(coalesceText(feed(make(), [...input]))).toEqual(coalesceText(expected));
    const tagged = parse('{"a <|python_tag|>{"name": "f", "parameters": {"x": 1}}');
    expect(callsOf(tagged).map((c) => [c.name, c.args])).toEqual([['f', { x: 1 }]]);
    expect(textOf(tagged)).toBe('{"a ');
  });

  it('reads thousands of failing candidates in one delta (a file given to `conveyor parse`) as it reads them streamed', () => {
    // Each `{` opens a candidate inside the last one's key string; each fails, and the text from the
    // next `{` is read again: once a stack frame each, which overflowed the stack.
    const input = `${'{"'.repeat(8000)}{"name": "f", "parameters": {"x": 1}}`;
    const events = parse(input);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['f', { x: 1 }]]);
    expect(textOf(events)).toBe('{"'.repeat(8000));
    expect(coalesceText(feed(make(), input.match(/[^]{1,7}/g)!))).toEqual(coalesceText(events));
  });

  it('reads a failed candidate again however it is split, a marker cut at the end of the text read again included', () => {
    for (const input of [
      '{"a{"b <|python_tag|>{"name": "f", "parameters": {}}',
      '{"Sure{"x" {"name": "f", "parameters": {"q": "{\\"name\\""}}',
      '{"{"{"name": "f", "arguments": {}} {"name',
    ]) {
      const events = coalesceText(parse(input));
      for (let cut = 1; cut < input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)])), `cut at ${cut}`).toEqual(events);
      expect(coalesceText(feed(make(), [...input]))).toEqual(events);
    }
  });

  it('accepts <|python_tag|> before the JSON', () => {
    const events = parse('<|python_tag|>{"name": "python", "parameters": {"code": "x = 1\\nprint(x)"}}');
    expect(events.filter((e) => e.type === 'call-piece').map((e) => e.type === 'call-piece' && e.piece.kind)).toEqual(['line', 'line', 'field']);
    expect(textOf(events)).toBe('');
  });

  it('handles deep nesting and parameters before the name', () => {
    const events = parse('{"parameters": {"level1": {"level2": {"value": "deep"}}}, "name": "complexTool"}');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'complexTool', args: { level1: { level2: { value: 'deep' } } }, argsText: '{"level1": {"level2": {"value": "deep"}}}' }]);
    expect(events[0]).toEqual(start('complexTool'));
  });
});

describe('llama3-json parser: prose that only looks like a call', () => {
  it.each([
    'Use a dict like {"a": 1} here.',
    'The set {1, 2} and {} and { }',
    'A person: {"name": "Ada", "age": 36}',
    'Only a name: {"name": "f"}',
    '<|python_tag|>print("hi")',
    'Unclosed {"name": "f", "param',
  ])('releases %j as text with no events', (input) => {
    expect(parse(input)).toEqual([text(input)]);
  });

  it('holds a candidate back only until it cannot be a call', () => {
    const parser = createLlama3JsonParser();
    expect(parser.push('See {"na')).toEqual([text('See ')]);
    expect(parser.push('me": "Ada", "age"')).toEqual([text('{"name": "Ada", "age"')]);
  });

  it('reports a started call that breaks, or is cut by max_tokens, as malformed and returns its text', () => {
    for (const input of ['{"name": "f", "parameters": {"a": 1}, "extra": 2}', '{"name": "f", "parameters": {"a": 1']) {
      const events = parse(input);
      expect(malformedOf(events)).toHaveLength(1);
      expect(malformedOf(events)[0]!.callId).toBe('call_1');
      expect(textOf(events)).toBe(input);
      expect(coalesceText(feed(make(), input.split('')))).toEqual(events);
    }
  });

  it('refuses tools outside the whitelist', () => {
    const input = '{"name": "rm", "parameters": {}}';
    const events = parse(input, { tools: ['search'] });
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: 'unknown tool "rm"' }]);
    expect(textOf(events)).toBe(input);
  });

  it('is registered as "llama3-json"', () => {
    expect(whole(() => createParser('llama3-json'), '{"name": "f", "parameters": {}}')).toEqual(parse('{"name": "f", "parameters": {}}'));
  });
});

/** Llama's calls in every shape; `<|python_tag|>` only leads the first call of a group. */
const render = (c: GeneratedCall, variant: number, first = true) => {
  const key = variant % 2 === 0 ? 'parameters' : 'arguments';
  const name = `"name": ${JSON.stringify(c.name)}`;
  const body = variant % 3 === 0 ? `{"${key}": ${c.argsText}, ${name}}` : variant % 3 === 1 ? `{${name}, "${key}": ${c.argsText}}` : `{"type": "function", ${name}, "${key}": ${c.argsText}}`;
  return variant % 5 === 0 && first ? `<|python_tag|>${body}` : body;
};
const safeProse = prose(['{', '}', '{"a": 1}', '{"name": "x"}', 'x = {1}', ';', '<|python_tag|>print(1)', '<|python', '{"parameters": 1}']).filter((p) => /[^\s;]/.test(p));
const group = fc.record({
  prose: safeProse,
  calls: fc.array(fc.record({ call: generatedCall, variant: fc.nat(29) }), { maxLength: 3 }),
  sep: fc.constantFrom(';', '; ', ';\n', '\n', ' ', ''),
});

describe('llama3-json parser: properties', () => {
  it('recovers every call exactly, and all prose as text', () => {
    fc.assert(
      fc.property(fc.array(group, { maxLength: 4 }), groupings, (groups, sizes) => {
        const input = groups.map((g) => g.prose + g.calls.map((c, i) => render(c.call, c.variant, i === 0)).join(g.sep)).join('');
        for (const events of [whole(make(), input), feed(make(), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual(groups.flatMap((g) => g.calls.map(({ call: c }) => [c.name, c.args, c.argsText])));
          expect(textOf(events)).toBe(groups.map((g) => g.prose).join(''));
          expect(malformedOf(events)).toEqual([]);
          expectNoHalfCharacters(events, input);
        }
      }),
      { numRuns: 150 },
    );
  });

  const fragment = fc.oneof(
    safeProse,
    fc.record({ call: generatedCall, variant: fc.nat(29) }).map(({ call, variant }) => render(call, variant)),
    fc.record({ call: generatedCall, variant: fc.nat(29), cut: fc.nat() }).map(({ call, variant, cut }) => {
      const full = render(call, variant);
      return full.slice(0, cut % full.length);
    }),
    fc.constantFrom('{', '{"name": "f", "parameters": {"a": 1}, "x": 1}', ';', '<|python_tag|>', '😀', '\uD83D'),
  );
  splitInvarianceProperties(make(), fc.array(fragment, { maxLength: 6 }).map((f) => f.join('')), { runs: 120 });
});
