import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLlama3JsonParser, type Llama3JsonParserOptions } from '../../parsers/formats/llama3-json-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, malformedOf, sameEveryWay, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
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

  it('takes the whitespace after <|python_tag|> as frame: in neither the name, the arguments nor the text (vLLM skips the tag, and json reads past it)', () => {
    for (const input of ['<|python_tag|> {"name": "f", "parameters": {"a": 1}}', '<|python_tag|>\n {"name": "f", "parameters": {"a": 1}}']) {
      for (const events of [parse(input), coalesceText(feed(make(), [...input]))]) {
        expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'f', args: { a: 1 }, argsText: '{"a": 1}' }]);
        expect(textOf(events)).toBe('');
      }
    }
    // A call that breaks gives back the tag and its whitespace as written.
    const cut = '<|python_tag|> {"name": "f", "parameters": {"a": ';
    expect(textOf(parse(cut))).toBe(cut);
  });

  it('handles deep nesting and parameters before the name', () => {
    const events = parse('{"parameters": {"level1": {"level2": {"value": "deep"}}}, "name": "complexTool"}');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'complexTool', args: { level1: { level2: { value: 'deep' } } }, argsText: '{"level1": {"level2": {"value": "deep"}}}' }]);
    expect(events[0]).toEqual(start('complexTool'));
  });
});

/** One short call, for the end-of-message cases. */
const call = '{"name": "f", "parameters": {"a": 1}}';

/** `input`'s events, checked to be the same whole, split anywhere in two, and one character at a time. */
const everyWay = (input: string) => sameEveryWay(make(), input);

describe('llama3-json parser: <|eom_id|> and <|eot_id|>, the end of the message', () => {

  it('drops the token after a call: it ends the call and is no content', () => {
    for (const token of ['<|eom_id|>', '<|eot_id|>']) {
      for (const input of [call + token, `<|python_tag|>${call}${token}`, `[${call}, ${call}]${token}`, `${call}; ${call}${token}`]) {
        const events = everyWay(input);
        expect(textOf(events), input).toBe('');
        expect(callsOf(events).map((c) => c.args)).toEqual(input.includes(', {') || input.includes('; {') ? [{ a: 1 }, { a: 1 }] : [{ a: 1 }]);
      }
    }
  });

  it('ends the call at the token, before end()', () => {
    const parser = createLlama3JsonParser();
    parser.push(call);
    expect(parser.push('<|eom_id|>')).toEqual([end({ a: 1 })]);
    expect(parser.end()).toEqual([]);
  });

  it('leaves the text before the call, and any after the token, as it was', () => {
    const events = everyWay(`Let me check.\n${call}<|eom_id|>`);
    expect(textOf(events)).toBe('Let me check.\n');
    expect(callsOf(events)).toHaveLength(1);
    expect(textOf(everyWay(`Sure. ${call} Done.<|eot_id|>`))).toBe('Sure.  Done.');
    expect(textOf(everyWay(`${call}<|eom_id|>after`))).toBe('after');
  });

  it('drops the token after an answer without a call too', () => {
    expect(everyWay('Hello!<|eot_id|>')).toEqual([text('Hello!')]);
    // What only starts like one stays text.
    expect(everyWay('a <|eo b <|eot_id')).toEqual([text('a <|eo b <|eot_id')]);
  });

  it('drops it in python-tag too, the other Llama 3 format, and leaves hermes as it was', () => {
    const input = 'Hi<|eot_id|>';
    expect(textOf(whole(() => createParser('hermes'), input))).toBe(input);
    expect(textOf(whole(() => createParser('python-tag'), input))).toBe('Hi');
  });
});

describe('llama3-json parser: whitespace after the last call', () => {

  it('is frame when only the end of the message follows: no whitespace-only content', () => {
    for (const input of [
      `${call}\n`,
      `${call}\n<|eom_id|>`,
      `${call} \n<|eot_id|>\n`,
      `<|python_tag|>${call}\n\n`,
      `[${call}, ${call}]\n<|eom_id|>`,
      `${call}; ${call}\n`,
      `Let me check.\n${call}\n<|eom_id|>`,
    ]) {
      const events = everyWay(input);
      expect(textOf(events), JSON.stringify(input)).toBe(input.startsWith('Let') ? 'Let me check.\n' : '');
      expect(callsOf(events).length, input).toBeGreaterThan(0);
    }
  });

  it('goes out with the text that follows it, unchanged', () => {
    expect(textOf(everyWay(`${call}\n\nDone.`))).toBe('\n\nDone.');
    expect(textOf(everyWay(`${call}\n<|eom_id|>\nafter`))).toBe('\n\nafter');
    expect(textOf(everyWay(`${call}\n<|eo`))).toBe('\n<|eo');
    expect(textOf(everyWay(`${call}\n[1, 2]\n`))).toBe('\n[1, 2]\n');
    expect(textOf(everyWay(`${call}\n{"a": 1}`))).toBe('\n{"a": 1}');
  });

  it('is the frame of a next call, whatever opens it', () => {
    for (const input of [`${call}\n${call}`, `${call}\n[${call}]\n`, `${call}\n<|python_tag|>${call}`, `${call}\n<|eom_id|>\n${call}\n`]) {
      const events = everyWay(input);
      expect(textOf(events), JSON.stringify(input)).toBe('');
      expect(callsOf(events)).toHaveLength(2);
    }
  });
});

// In Llama 3.x's JSON tool-call format ";" separates calls: one after the last call, with no call
// after it, is the model closing a list that had no more items, not an answer.
describe('llama3-json parser: a ";" after the last call', () => {
  it('is frame when only whitespace and end tokens follow to the end of the output', () => {
    for (const input of [
      `${call};`,
      `${call};\n`,
      `${call} ;\n<|eom_id|>`,
      `${call};<|eot_id|>\n`,
      `${call}; ${call};\n`,
      `<|python_tag|>${call};\n\n`,
      `Let me check.\n${call};\n<|eom_id|>`,
    ]) {
      const events = everyWay(input);
      expect(textOf(events), JSON.stringify(input)).toBe(input.startsWith('Let') ? 'Let me check.\n' : '');
      expect(callsOf(events).length, input).toBeGreaterThan(0);
    }
  });

  it('goes out, unchanged, with the text that follows it', () => {
    expect(textOf(everyWay(`${call};\nDone.`))).toBe(';\nDone.');
    expect(textOf(everyWay(`${call}; <|eom_id|>\nafter`))).toBe('; \nafter');
    expect(textOf(everyWay(`${call};;\n`))).toBe(';;\n');
    expect(textOf(everyWay(`${call};\n<|eo`))).toBe(';\n<|eo');
    expect(textOf(everyWay(`${call}; [1, 2]`))).toBe('; [1, 2]');
    expect(textOf(everyWay(`${call}; {"a": 1}`))).toBe('; {"a": 1}');
  });

  it('separates calls, end tokens between them or not', () => {
    for (const input of [`${call};\n${call}`, `${call}; <|python_tag|>${call}`, `${call};<|eom_id|>\n${call}\n`]) {
      const events = everyWay(input);
      expect(textOf(events), JSON.stringify(input)).toBe('');
      expect(callsOf(events)).toHaveLength(2);
    }
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
    for (const input of ['{"name": "f", "parameters": {"a": 1}, "name": "g"}', '{"name": "f", "parameters": {"a": 1']) {
      const events = parse(input);
      expect(malformedOf(events)).toHaveLength(1);
      expect(malformedOf(events)[0]!.callId).toBe('call_1');
      expect(textOf(events)).toBe(input);
      expect(coalesceText(feed(make(), input.split('')))).toEqual(events);
    }
  });

  it('decodes "parameters" (or OpenAI\'s "arguments") written as a string holding the object, as hermes and mistral do', () => {
    for (const input of [
      '{"name": "get_weather", "parameters": "{\\"city\\": \\"Paris\\"}"}',
      '{"parameters": "{\\"city\\": \\"Paris\\"}", "name": "get_weather"}',
      '<|python_tag|>{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}<|eom_id|>',
    ]) {
      const events = parse(input);
      expect(malformedOf(events)).toEqual([]);
      expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([['get_weather', { city: 'Paris' }, '{"city": "Paris"}']]);
      expect(textOf(events)).toBe('');
      expect(coalesceText(feed(make(), input.split('')))).toEqual(events);
    }
    // A string that holds no JSON object keeps the object prose, as any other non-object there.
    for (const input of ['A person: {"name": "Ada", "parameters": "tall"}', '{"name": "f", "parameters": "[1]"}', '{"parameters": "", "name": "f"}']) {
      expect(parse(input)).toEqual([text(input)]);
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

/** Every cut into two deltas, and one character per delta, give the whole text's events. */
const expectSplitInvariant = (input: string) => {
  const expected = coalesceText(parse(input));
  for (let cut = 1; cut < input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)])), `cut at ${cut}`).toEqual(expected);
  expect(coalesceText(feed(make(), [...input]))).toEqual(expected);
};

describe('llama3-json parser: keys vLLM ignores, wrappers and lists (review 9, "llama3-json, extra keys")', () => {
  it('ignores a key after call-start, whatever its value: vLLM reads only the name and the arguments', () => {
    const calls = [
      '{"name": "f", "parameters": {"a": 1}, "id": "x"}',
      '{"name": "f", "parameters": {"a": 1}, "meta": {"note": "}{][ \\"}", "n": [1, {"x": null}, "]"]}}',
      '{"parameters": {"a": 1}, "name": "f", "tags": ["{", "}"], "type": "function"}',
      '{"type": "function", "name": "f", "arguments": {"a": 1}, "extra": {"parameters": {"a": 2}, "name": "g"}}',
    ];
    for (const input of calls) {
      const events = parse(input);
      expect(events.filter((e) => e.type === 'call-start')).toEqual([start('f')]);
      expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'f', args: { a: 1 }, argsText: '{"a": 1}' }]);
      expect(textOf(events)).toBe('');
      expectSplitInvariant(`Sure. ${input} Done.`);
    }
    expect(parse('{"name": "f", "parameters": {"a": 1}, "id": "x"}; {"name": "g", "parameters": {}}')).toEqual([
      start('f'),
      args('{"a": 1'),
      field(['a'], 1),
      args('}'),
      end({ a: 1 }),
      start('g', 'call_2'),
      args('{}', 'call_2'),
      end({}, 'call_2'),
    ]);
  });

  it('keeps an object prose when a key outside the call comes before call-start (an OpenAI tool definition is not a call)', () => {
    // Only "type" and "id", OpenAI's tool-call keys, may come before it.
    for (const input of [
      '{"note": "x", "name": "f", "parameters": {"a": 1}}',
      '{"name": "f", "note": "x", "parameters": {"a": 1}}',
      '{"name": "get_weather", "description": "Weather {now}", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}',
      '{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}}}',
    ]) {
      expect(parse(input)).toEqual([text(input)]);
      expectSplitInvariant(input);
    }
    // Not a wrapper, but the call inside it is still found, as any call in prose.
    const inside = '{"index": 0, "type": "function", "function": {"name": "f", "parameters": {}}}';
    expect(parse(inside)).toEqual([text('{"index": 0, "type": "function", "function": '), start('f'), args('{}'), end({}), text('}')]);
  });

  it('still makes a started call malformed for a second name or arguments', () => {
    for (const input of ['{"name": "f", "parameters": {"a": 1}, "arguments": {}}', '{"type": "function", "function": {"name": "f", "parameters": {}}, "name": "g"}']) {
      const events = parse(input);
      expect(malformedOf(events).map((e) => e.callId)).toEqual(['call_1']);
      expect(callsOf(events)).toEqual([]);
      expect(textOf(events)).toBe(input);
      expectSplitInvariant(input);
    }
  });

  it('reads OpenAI\'s {"type": "function", "function": {…}} as the call, its braces and keys not content', () => {
    const input = 'Calling: {"type": "function", "function": {"name": "get_weather", "parameters": {"city": "Paris"}}, "id": "call_9"} ok';
    expect(parse(input)).toEqual([
      text('Calling: '),
      start('get_weather'),
      args('{"city": "Paris"'),
      field(['city'], 'Paris'),
      args('}'),
      end({ city: 'Paris' }),
      text(' ok'),
    ]);
    expectSplitInvariant(input);
    // OpenAI's own order, its "id" first.
    const openai = parse('{"id": "call_9", "type": "function", "function": {"name": "f", "parameters": {}}}');
    expect(callsOf(openai).map((c) => [c.name, c.args])).toEqual([['f', {}]]);
    expect(textOf(openai)).toBe('');
    const before = parse('{"function": {"arguments": {"code": "print(1)\\n"}, "name": "python", "type": "function"}, "type": "function"}');
    expect(before.filter((e) => e.type === 'call-piece').map((e) => e.type === 'call-piece' && e.piece.kind)).toEqual(['line', 'field']);
    expect(callsOf(before)).toEqual([{ callId: 'call_1', name: 'python', args: { code: 'print(1)\n' }, argsText: '{"code": "print(1)\\n"}' }]);
    expect(textOf(before)).toBe('');
  });

  it('takes a [ … ] list of calls with its brackets and commas as frame, as vLLM finds each object in it', () => {
    const input = 'Calls: [\n  {"name": "a", "parameters": {}},\n  {"type": "function", "function": {"name": "b", "arguments": {"x": 1}}}\n] done';
    expect(parse(input)).toEqual([
      text('Calls: '),
      start('a'),
      args('{}'),
      end({}),
      start('b', 'call_2'),
      args('{"x": 1', 'call_2'),
      field(['x'], 1, 'call_2'),
      args('}', 'call_2'),
      end({ x: 1 }, 'call_2'),
      text(' done'),
    ]);
    expectSplitInvariant(input);
    const tagged = parse('<|python_tag|>[{"name": "a", "parameters": {}}]');
    expect(callsOf(tagged).map((c) => c.name)).toEqual(['a']);
    expect(textOf(tagged)).toBe('');
    // The prose's key string ran over the list's "[": read again from there.
    const swallowed = parse('{"a [{"name": "f", "parameters": {}}]');
    expect(callsOf(swallowed).map((c) => c.name)).toEqual(['f']);
    expect(textOf(swallowed)).toBe('{"a ');
  });

  it('releases brackets and commas around anything but calls as text', () => {
    for (const input of ['[1, 2] and [x]', '[] [ ]', '[{"a": 1}]', '[[{"a": 1}]]', 'a, b]', '{"name": "f", "parameters": {}}, x']) {
      expect(textOf(parse(input))).toBe(input.replace('{"name": "f", "parameters": {}}', ''));
      expectSplitInvariant(input);
    }
    // A list whose second item is no call: the "[" was the first call's frame, the rest is text.
    const mixed = '[{"name": "a", "parameters": {}}, 42, {"name": "b", "parameters": {}}]';
    const events = parse(mixed);
    expect(callsOf(events).map((c) => c.name)).toEqual(['a', 'b']);
    expect(textOf(events)).toBe(', 42, ]');
    expectSplitInvariant(mixed);
  });
});

/** After call-start, a key the call does not use, with braces and brackets in its strings. */
const EXTRA_KEY = ', "meta": {"note": "}{][ \\"}", "n": [1, {"x": null}, "]"]}';
type Shape = { variant: number; wrapped?: boolean; extra?: boolean };
/** Llama's calls in every shape; `<|python_tag|>` only leads the first call of a group. */
const renderCall = (c: GeneratedCall, { variant, wrapped = false, extra = false }: Shape) => {
  const key = variant % 2 === 0 ? 'parameters' : 'arguments';
  const name = `"name": ${JSON.stringify(c.name)}`;
  let body = variant % 3 === 0 ? `{"${key}": ${c.argsText}, ${name}}` : variant % 3 === 1 ? `{${name}, "${key}": ${c.argsText}}` : `{"type": "function", ${name}, "${key}": ${c.argsText}}`;
  if (extra) body = `${body.slice(0, -1)}${EXTRA_KEY}}`;
  return wrapped ? `{"type": "function", "function": ${body}${extra ? ', "id": "call_9"' : ''}}` : body;
};
const render = (c: GeneratedCall, variant: number, first = true) => (variant % 5 === 0 && first ? '<|python_tag|>' : '') + renderCall(c, { variant });
// A "[" right before a call is the frame of a list of calls: no prose here ends with one.
const safeProse = prose(['{', '}', '{"a": 1}', '{"name": "x"}', 'x = {1}', ';', '<|python_tag|>print(1)', '<|python', '{"parameters": 1}', ']', '[1, 2]', ',']).filter(
  (p) => /[^\s;,]/.test(p) && !/\[\s*$/.test(p),
);
const group = fc.record({
  prose: safeProse,
  calls: fc.array(fc.record({ call: generatedCall, variant: fc.nat(29), wrapped: fc.boolean(), extra: fc.boolean() }), { maxLength: 3 }),
  sep: fc.constantFrom(';', '; ', ';\n', '\n', ' ', ''),
  list: fc.constantFrom(undefined, ['[', ',', ']'], ['[ ', ', ', ' ]'], ['[\n  ', ',\n  ', '\n]']),
});
/** A group's calls, joined by its separator or written as a list; `<|python_tag|>` may lead them. */
const renderGroup = (g: { calls: Array<Shape & { call: GeneratedCall }>; sep: string; list: readonly string[] | undefined }) => {
  const tag = g.calls[0] !== undefined && g.calls[0].variant % 5 === 0 ? '<|python_tag|>' : '';
  const calls = g.calls.map((c) => renderCall(c.call, c));
  if (g.list === undefined || calls.length === 0) return tag + calls.join(g.sep);
  const [open, sep, close] = g.list;
  return tag + open + calls.join(sep) + close;
};

describe('llama3-json parser: properties', () => {
  it('recovers every call exactly, and all prose as text', () => {
    fc.assert(
      fc.property(fc.array(group, { maxLength: 4 }), groupings, (groups, sizes) => {
        const input = groups.map((g) => g.prose + renderGroup(g)).join('');
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
    fc.record({ call: generatedCall, variant: fc.nat(29), wrapped: fc.boolean(), extra: fc.boolean() }).map((c) => renderCall(c.call, c)),
    fc.constantFrom(
      '{',
      '{"name": "f", "parameters": {"a": 1}, "x": 1}',
      '{"name": "f", "parameters": {"a": 1}, "name": "g"}',
      '{"x": 1, "name": "f", "parameters": {}}',
      '{"type": "function", "function": {"name": "f", "parameters": {"a": 1}}, "name": "g"}',
      '{"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}',
      '{"function": 1}',
      ';',
      '[',
      ', ',
      ']',
      '<|python_tag|>',
      '<|eom_id|>',
      '<|eot_id|>',
      '<|eo',
      '😀',
      '\uD83D',
    ),
  );
  splitInvarianceProperties(make(), fc.array(fragment, { maxLength: 6 }).map((f) => f.join('')), { runs: 120 });
});
