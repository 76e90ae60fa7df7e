import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createPythonicParser, type PythonicParserOptions } from '../../parsers/formats/pythonic-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, malformedOf, perChar, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';

const make = (options?: PythonicParserOptions) => () => createPythonicParser(options);
const parse = (input: string, options?: PythonicParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

describe('pythonic parser: calls', () => {
  it('parses a single call, emitting each argument at the delimiter that ends it', () => {
    expect(parse("[get_weather(city='San Francisco', metric='celsius')]")).toEqual([
      start('get_weather'),
      field(['city'], 'San Francisco'),
      args('{"city":"San Francisco"'),
      field(['metric'], 'celsius'),
      args(',"metric":"celsius"}'),
      end({ city: 'San Francisco', metric: 'celsius' }),
    ]);
  });

  it('makes each call of a parallel list its own call, ended at its own parenthesis', () => {
    const events = parse("[get_weather(city='Paris'), get_time(tz=\"Europe/Paris\", hour24=True)]", { callIdPrefix: 'call_r1_' });
    expect(callsOf(events)).toEqual([
      { callId: 'call_r1_1', name: 'get_weather', args: { city: 'Paris' }, argsText: '{"city":"Paris"}' },
      { callId: 'call_r1_2', name: 'get_time', args: { tz: 'Europe/Paris', hour24: true }, argsText: '{"tz":"Europe/Paris","hour24":true}' },
    ]);
    const endOfFirst = events.findIndex((e) => e.type === 'call-end');
    const startOfSecond = events.findIndex((e) => e.type === 'call-start' && e.callId === 'call_r1_2');
    expect(endOfFirst).toBeLessThan(startOfSecond);
  });

  it('keeps the text before and after the list as content, unchanged', () => {
    const events = parse("Let me check.\n  [get_weather(city='Oslo')] I'll report back.\n");
    expect(events).toEqual([
      text('Let me check.\n  '),
      start('get_weather'),
      field(['city'], 'Oslo'),
      args('{"city":"Oslo"}'),
      end({ city: 'Oslo' }),
      text(" I'll report back.\n"),
    ]);
  });

  it('reads nested, escaped and unicode literals exactly as Python does', () => {
    const input = String.raw`[f(s="caf\u00e9 \N" 'x\'y' "😀\t", d={'a': [1, {"b": None}], 2: True}, t=("x",), u=(3), r=r"C:\new\path", b=u'\x41\101\U0001F600', c="""line1
line2""", e='a\
b')]`;
    const [call] = callsOf(parse(input.replace('\\N', '\\\\N')));
    expect(call!.args).toEqual({
      s: 'café \\N' + "x'y" + '😀\t',
      d: { a: [1, { b: null }], '2': true },
      t: ['x'],
      u: 3,
      r: 'C:\\new\\path',
      b: 'AA😀',
      c: 'line1\nline2',
      e: 'ab',
    });
  });

  it('carries empty and non-string values', () => {
    const [call] = callsOf(parse('[f(a="", b=[], c={}, d=0, e=False, g=-1.5, h=1e3, i=0x1F, j=1_000, k=.5, l=(), m=None)]'));
    expect(call!.args).toEqual({ a: '', b: [], c: {}, d: 0, e: false, g: -1.5, h: 1000, i: 31, j: 1000, k: 0.5, l: [], m: null });
  });

  // Regression: call-args held JSON.stringify of doubles, so an id past 2^53 reached the client
  // rounded (12345678901234567890 as 12345678901234567000); Python ints, and json.dumps, are exact.
  it('keeps every digit of an integer past 2^53 in call-args, as json.dumps writes it', () => {
    const [call] = callsOf(parse('[f(id=12345678901234567890, n=-9007199254740993, h=0x1_FFFF_FFFF_FFFF_FFFF, l=[9007199254740993], d={18446744073709551616: 1})]'));
    expect(call!.argsText).toBe('{"id":12345678901234567890,"n":-9007199254740993,"h":36893488147419103231,"l":[9007199254740993],"d":{"18446744073709551616":1}}');
    // args, made of doubles, hold what JSON.parse makes of that text.
    expect(call!.args).toEqual(JSON.parse(call!.argsText));
  });

  // Regression: call-args wrote floats as JSON.stringify does (-0.0 as 0, 1.0 as 1, float keys
  // `{1.5: …}` fine but `{1.0: …}` as "1") and kept equal keys `True`/`1.0` apart; expected text
  // from python3: json.dumps of ast.literal_eval of each argument.
  it('writes floats, float keys and equal number keys in call-args as json.dumps does', () => {
    const input =
      "[f(d={1.5: 'a', True: 'b', None: 'c', 1.0: 'd', -0.0: 'e', 1e16: 'f', 0x10: 'g', 10000000000000000: 'h', 12345678901234567890: 'i', 12345678901234567168.0: 'j'}, z=-0.0, w=[-0.0, 0.0, -0, 1.0, 1e-5, +1.5, 2.5e300, 0.0001])]";
    const [call] = callsOf(parse(input));
    expect(call!.argsText).toBe(
      '{"d":{"1.5":"a","true":"d","null":"c","-0.0":"e","1e+16":"h","16":"g","12345678901234567890":"i","1.2345678901234567e+19":"j"},"z":-0.0,"w":[-0.0,0.0,0,1.0,1e-05,1.5,2.5e+300,0.0001]}',
    );
    expect(call!.args).toEqual(JSON.parse(call!.argsText));
    expect(Object.is(call!.args.z, -0)).toBe(true);
  });

  it('refuses a \\N{name} escape (no Unicode name table here) as a malformed call, with the text kept', () => {
    const input = String.raw`Hi
[f(s="a \N{BULLET} b")] done`;
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining('\\N{…}') }]);
    expect(textOf(events)).toBe(input);
    // A raw string keeps the backslash, as Python does, so there it is no escape.
    expect(callsOf(parse(String.raw`[f(s=r"\N{BULLET}")]`))[0]!.args).toEqual({ s: String.raw`\N{BULLET}` });
  });

  it("writes a dict's keys in call-args in Python's order, a repeated key at its first place with its last value", () => {
    const [call] = callsOf(parse("[f(d={'b': 1, 2: 'x', 'b': 3, True: None})]"));
    expect(call!.argsText).toBe('{"d":{"b":3,"2":"x","true":null}}');
    expect(call!.args).toEqual({ d: { b: 3, '2': 'x', true: null } });
  });

  // Regression: keys were merged as they were written, not as Python holds them, so when a
  // third key equal to the first came last ({1: 'a', '1': 'b', 1.0: 'c'}) its value won, where
  // Python's dict is {1: 'c', '1': 'b'} and the JSON read from json.dumps's text keeps 'b'.
  // Expected values from python3: json.loads(json.dumps(ast.literal_eval(d))).
  it.each([
    ["{1: 'a', '1': 'b'}", '{"1":"b"}'],
    ["{'1': 'b', 1: 'a'}", '{"1":"a"}'],
    ["{1: 'a', '1': 'b', 1.0: 'c'}", '{"1":"b"}'],
    ["{True: 'x', 'true': 'y', 1: 'z', None: 'n', 'null': 'm'}", '{"true":"y","null":"m"}'],
  ])('a str key and a number key that print alike, %s, are the one JSON key a client reads from vLLM: %s', (dict, json) => {
    const [call] = callsOf(parse(`[f(d=${dict})]`));
    expect(call!.argsText).toBe(`{"d":${json}}`);
    expect(call!.args).toEqual({ d: JSON.parse(json) });
  });

  it('accepts whitespace and newlines between tokens and trailing commas', () => {
    const input = '[\n  search(\n    query = "llm serving",\n    top_k = 5,\n  ),\n  fetch(url="https://x.y"),\n]';
    expect(callsOf(parse(input)).map((c) => c.args)).toEqual([{ query: 'llm serving', top_k: 5 }, { url: 'https://x.y' }]);
  });

  it('handles a call without arguments', () => {
    expect(parse('[get_weather()]')).toEqual([start('get_weather'), args('{}'), end({})]);
  });

  it('emits a field as soon as its delimiter arrives, before the rest of the call', () => {
    const parser = createPythonicParser();
    expect(parser.push("[run(code='x = 1\\nprint(x)'")).toEqual([start('run')]);
    expect(parser.push(', ')).toEqual([field(['code'], 'x = 1\nprint(x)'), args('{"code":"x = 1\\nprint(x)"')]);
    expect(parser.push('timeout=3')).toEqual([]);
    expect(parser.push(')')).toEqual([field(['timeout'], 3), args(',"timeout":3}'), end({ code: 'x = 1\nprint(x)', timeout: 3 })]);
    expect(parser.push(']')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it('drops the Llama 4 wrapper tokens around the list', () => {
    const events = parse("Here's a call: <|python_start|>[get_weather(location='Tokyo', data=[1, 2, 3])]<|python_end|>");
    expect(textOf(events)).toBe("Here's a call: ");
    expect(callsOf(events)[0]!.args).toEqual({ location: 'Tokyo', data: [1, 2, 3] });
  });

  it('tells a wrapper token that begins with "[" from a list however the text is split', () => {
    // "[PY" + "]" is the wrapper token, as it is whole; "[" alone must not be taken for a list first.
    const options = { wrapperTokens: ['[PY]', '[/PY]'] };
    for (const input of ['[PY][f(a=1)][/PY]', 'x [PY] y']) {
      const expected = whole(make(options), input);
      expect(perChar(make(options), input)).toEqual(expected);
      for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(options), [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
    }
    expect(parse('x [PY] y', options)).toEqual([text('x  y')]);
    expect(textOf(parse('[PY][f(a=1)][/PY]', options))).toBe('');
  });

  it('is registered as "pythonic" and validates its options', () => {
    expect(callsOf(whole(() => createParser('pythonic'), '[f(x=1)]'))).toHaveLength(1);
    expect(() => createPythonicParser({ bogus: 1 } as never)).toThrow(InvalidRequestError);
  });
});

describe('pythonic parser: prose and failures', () => {
  it.each([
    'See [1] and [2, 3].',
    'Read [the docs](https://example.com) first.',
    'Compare [f(x), f(y)] with arr[i].',
    'A list: [see (below)] and [a b(c=1)].',
    'Unclosed [get',
    'Unclosed [get_weather(city',
  ])('releases prose brackets unchanged: %j', (input) => {
    expect(parse(input)).toEqual([text(input)]);
  });

  it('reports a truncated call as malformed, streamed or whole, and releases its text', () => {
    const input = 'Checking.\n[get_weather(city="Par';
    const expected = [text('Checking.\n'), start('get_weather'), { type: 'malformed', callId: 'call_1', reason: expect.stringContaining('ended') }, text('[get_weather(city="Par')];
    expect(parse(input)).toEqual(expected);
    expect(whole(make(), input)).toEqual(whole(make(), input));
    const perChar = feed(make(), input.split(''));
    expect(malformedOf(perChar)).toHaveLength(1);
    expect(callsOf(perChar)).toEqual([]);
  });

  it('keeps the calls finished before a truncation', () => {
    const events = parse("[f(x=1), g(y='abc");
    expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_2', reason: expect.stringContaining('unterminated string') }]);
    expect(textOf(events)).toBe(", g(y='abc");
  });

  it.each([
    ['[f(x=1, 2)]', 'keyword arguments only'],
    ['[f(x=y)]', 'literals'],
    ['[f(x=1, x=2)]', 'repeated'],
    ['[f(x=1 2)]', "expected ',' or ')'"],
    ['[f(x={[1]: 2})]', 'dict keys'],
    ['[f(x=b"raw")]', 'not plain literals'],
    ['[f(x=1e999)]', 'out of range'],
  ])('reports %j as malformed (%s)', (input, reason) => {
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining(reason) }]);
    expect(callsOf(events)).toEqual([]);
    // No call of the list ran: all of it reads as the model wrote it.
    expect(textOf(events)).toBe(input);
  });

  it('resumes as prose at the character that broke a list', () => {
    const events = parse('[f(x=1) oops] then\n[g(y=2)]');
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([
      ['f', { x: 1 }],
      ['g', { y: 2 }],
    ]);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: expect.stringContaining("expected ',' or ']'") }]);
    expect(textOf(events)).toBe(' oops] then\n');
  });

  it('takes a list only at the start of a line: one inside a sentence is the model talking about a call', () => {
    for (const input of ['You could call [search(query="x")] yourself.', 'See [docs(v=1)](http://x).', 'Done. [f(x=1)]']) {
      for (const events of [parse(input), feed(make(), input.split(''))]) {
        expect(callsOf(events), input).toEqual([]);
        expect(malformedOf(events)).toEqual([]);
        expect(textOf(events)).toBe(input);
      }
    }
    // The output's start, a line's (after spaces or tabs), a wrapper token, or right after a list.
    const input = '<|python_start|>[a(x=1)]<|python_end|>\n\t[b(x=2)][c(x=3)]\nok <|python_start|>[d(x=4)]';
    expect(callsOf(parse(input)).map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(callsOf(feed(make(), input.split(''))).map((c) => c.name)).toEqual(['a', 'b', 'c', 'd']);
  });

  // Regression: a nested list line in a fenced Python block (code the code-fence wrapper runs)
  // was read as a call list: two `Point` calls were dispatched and the block's own call failed.
  it('takes no list inside a fenced code block, where a line starting with "[" is the code\'s', () => {
    const input = 'Plot it:\n```python\ngrid = [\n    [Point(x=0, y=0), Point(x=1, y=0)],\n]\n```\n[f(x=1)]\n~~~\n[g(x=2)]';
    for (const events of [parse(input), feed(make(), input.split(''))]) {
      expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
      expect(malformedOf(events)).toEqual([]);
      expect(textOf(events)).toBe(input.replace('[f(x=1)]', ''));
    }
  });
});

// Regression: a value no literal of ours reads (`b'z'`, `1e999`, a name) in the first call made
// the whole list malformed and text, so the good calls after it never ran (README, "Known
// differences", review 9). vLLM does no better: one exception anywhere in its ast walk makes all
// of the output content (non-streamed), or drops every delta from the bad call on (streamed).
describe('pythonic parser: one bad call among good ones', () => {
  const goodCalls = (events: readonly ParserEvent[]) => callsOf(events).map((c) => ({ name: c.name, args: c.args }));

  it.each([
    ["b'z'", 'b-prefixed strings are not plain literals'],
    ['1e999', 'number 1e999 is out of range'],
    ['foo', 'arguments must be literals, not the name foo'],
    ['{1, 2}', "expected ':' after a dict key"],
    ["-'a'", 'a sign must be followed by a number'],
    ['"\\N{BULLET}"', '\\N{…} escapes are not supported'],
  ])('in the first call (%s): that call alone is malformed, its text kept, and the next calls run', (value, reason) => {
    const input = `Checking.\n[lookup(q=${value}), get_weather(city='Paris'), get_time(tz='CET')]\nDone.`;
    const events = parse(input);
    expect(events).toEqual([
      text('Checking.\n'),
      start('lookup'),
      { type: 'malformed', callId: 'call_1', reason: `pythonic: ${reason}` },
      start('get_weather', 'call_2'),
      field(['city'], 'Paris', 'call_2'),
      args('{"city":"Paris"}', 'call_2'),
      end({ city: 'Paris' }, 'call_2'),
      // Held until a call of the list ran: then it is a call list, and only the bad call's own
      // text is content, without the list's "[" (were none to run, all of it would be, as written).
      text(`lookup(q=${value})`),
      start('get_time', 'call_3'),
      field(['tz'], 'CET', 'call_3'),
      args('{"tz":"CET"}', 'call_3'),
      end({ tz: 'CET' }, 'call_3'),
      text('\nDone.'),
    ]);
    expect(perChar(make(), input)).toEqual(events);
    for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)]))).toEqual(events);
  });

  it('in a middle call: the calls before and after it run, and its own text is content', () => {
    const events = parse('[a(x=1), lookup(q=foo, n=2), b(y=[1, 2]), c()]');
    expect(goodCalls(events)).toEqual([
      { name: 'a', args: { x: 1 } },
      { name: 'b', args: { y: [1, 2] } },
      { name: 'c', args: {} },
    ]);
    expect(callsOf(events).map((c) => c.callId)).toEqual(['call_1', 'call_3', 'call_4']);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_2', reason: 'pythonic: arguments must be literals, not the name foo' }]);
    // Once a call has run, the list's brackets and separators stay frame: only the call is text.
    expect(textOf(events)).toBe('lookup(q=foo, n=2)');
  });

  it('keeps the separator between bad calls as content, before a call runs or after, or with one that ran between them', () => {
    for (const input of ['[f(x=foo), h(y=bar), g(z=1)]', '[g(z=1), f(x=foo), h(y=bar)]', '[f(x=foo), g(z=1), h(y=bar)]']) {
      const events = parse(input);
      expect(goodCalls(events), input).toEqual([{ name: 'g', args: { z: 1 } }]);
      // The last read `f(x=foo)h(y=bar)`: the separators around a call that ran are frame.
      expect(textOf(events), input).toBe('f(x=foo), h(y=bar)');
      expect(perChar(make(), input)).toEqual(events);
    }
    // None runs, and the list then breaks: all of it is content as written.
    const broken = "[f(x=foo), h(y=bar), g(z='a\nb')]";
    const events = parse(broken);
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe(broken);
    expect(perChar(make(), broken)).toEqual(events);
  });

  it('in the last call: the calls before it run', () => {
    const events = parse("[a(x=1),\n b(q=None, r=b'\\x00')\n]");
    expect(goodCalls(events)).toEqual([{ name: 'a', args: { x: 1 } }]);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_2', reason: expect.stringContaining('b-prefixed') }]);
    expect(textOf(events)).toBe("b(q=None, r=b'\\x00')");
  });

  it.each(['f(1, x=2)', 'f(x=1, 2)', 'f(x=1, x=2)', 'f(x=1 2)', 'f(x=1; y=2)', "f(x='a' + 'b')", 'f(x=[1, 2], y=set())'])(
    'a positional or repeated argument, or junk after a value, is one malformed call too: %s',
    (bad) => {
      const events = parse(`[ok(n=1), ${bad}, ok(n=2)]`);
      expect(goodCalls(events)).toEqual([
        { name: 'ok', args: { n: 1 } },
        { name: 'ok', args: { n: 2 } },
      ]);
      expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_2', reason: expect.any(String) }]);
      expect(textOf(events)).toBe(bad);
    },
  );

  it('ends the list at a bracket that does not match: no ")" after it can be trusted to end the call', () => {
    const events = parse('[ok(n=1), f(x=[1, 2)], ok(n=2)]');
    expect(goodCalls(events)).toEqual([{ name: 'ok', args: { n: 1 } }]);
    expect(malformedOf(events)).toEqual([
      { type: 'malformed', callId: 'call_2', reason: expect.stringContaining("expected ',' or ']'") },
      { type: 'malformed', reason: "pythonic: expected ']', got ')'" },
    ]);
    // The list's text since its last finished call, separator first, as any failed list releases it.
    expect(textOf(events)).toBe(', f(x=[1, 2)], ok(n=2)]');
    expect(perChar(make(), '[ok(n=1), f(x=[1, 2)], ok(n=2)]')).toEqual(events);
  });

  it("finds the bad call's end past brackets, strings and comments that hold a ')'", () => {
    const bad = String.raw`lookup(q=foo, s=')', t="""a)
'''""", d={'k': [(1, 2)]}, # not the end)
 r=r'\')', u='\'')`;
    const input = `[${bad}, get_weather(city='Oslo')]`;
    const events = parse(input);
    expect(goodCalls(events)).toEqual([{ name: 'get_weather', args: { city: 'Oslo' } }]);
    expect(textOf(events)).toBe(bad);
    expect(perChar(make(), input)).toEqual(events);
  });

  it('a list none of whose calls runs reads as the model wrote it', () => {
    for (const input of ["[f(x=foo), g(y=b'z')]", '[f(x=foo),\n g(y=1e999),\n]', '[f(x=foo)](https://example.com)', '[f(x=foo)] and [g(y=bar)]']) {
      const events = parse(input);
      expect(callsOf(events), input).toEqual([]);
      expect(textOf(events), input).toBe(input);
      expect(perChar(make(), input)).toEqual(events);
    }
  });

  it("ends the list where a bad call cannot end: a newline in a one-line string, the output's end", () => {
    // 'it' closes the string early; the quote after "fine" opens one the line never closes.
    const input = "[f(x='it's fine'), g(y=1)]\nnext line";
    const events = parse(input);
    expect(callsOf(events)).toEqual([]);
    expect(malformedOf(events).map((m) => m.callId)).toEqual(['call_1', undefined]);
    expect(textOf(events)).toBe(input);
    const cut = parse("[a(x=1), f(x=foo, y='unfinished");
    expect(goodCalls(cut)).toEqual([{ name: 'a', args: { x: 1 } }]);
    expect(malformedOf(cut)).toEqual([
      { type: 'malformed', callId: 'call_2', reason: 'pythonic: arguments must be literals, not the name foo' },
      { type: 'malformed', reason: 'pythonic: the output ended inside the tool call list' },
    ]);
    expect(textOf(cut)).toBe(", f(x=foo, y='unfinished");
    // Broken by a newline in a one-line string after a call ran: the separator stays before the call's text.
    const broken = '[a(x=1),\n f(x=foo, y="a\nb"), g(y=1)]';
    const split = parse(broken);
    expect(goodCalls(split)).toEqual([{ name: 'a', args: { x: 1 } }]);
    expect(textOf(split)).toBe(broken.slice('[a(x=1)'.length));
    expect(perChar(make(), broken)).toEqual(split);
  });

  it('streams: malformed at the character that makes the call impossible, the next call at its "("', () => {
    const parser = createPythonicParser();
    expect(parser.push('[lookup(q=fo')).toEqual([start('lookup')]);
    expect(parser.push('o')).toEqual([]);
    expect(parser.push(', n=')).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'pythonic: arguments must be literals, not the name foo' }]);
    // The bad call's text is held until a call of the list runs (were the list to fail or end
    // first, it would go out as written, from the "[").
    expect(parser.push("'x)'")).toEqual([]);
    expect(parser.push(')')).toEqual([]);
    expect(parser.push(', get_weather(')).toEqual([start('get_weather', 'call_2')]);
    expect(parser.push("city='Paris')")).toEqual([field(['city'], 'Paris', 'call_2'), args('{"city":"Paris"}', 'call_2'), end({ city: 'Paris' }, 'call_2'), text("lookup(q=foo, n='x)')")]);
    expect(parser.push(']')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });
});

// Python source for JSON values, in varied spellings, to check the round trip.
const pyString = (s: string, quote: string): string => {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (quote.includes(ch)) out += `\\${ch}`;
    else if (ch === '\n') out += quote.length === 3 ? '\n' : '\\n';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0xd800 && code <= 0xdfff) out += `\\u${code.toString(16)}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
};

type Py = { src: string; value: unknown };

const pyValue: fc.Memo<Py> = fc.memo((depth) => {
  const leaf: fc.Arbitrary<Py> = fc.oneof(
    fc.tuple(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom("'", '"', "'''", '"""')).map(([s, q]) => ({ src: pyString(s, q), value: s })),
    fc.integer({ min: -1e6, max: 1e6 }).map((n) => ({ src: String(n), value: n + 0 })),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => {
      const src = String(n);
      return { src: /[.e]/.test(src) ? src : `${src}.0`, value: n + 0 };
    }),
    fc.constantFrom<Py>({ src: 'True', value: true }, { src: 'False', value: false }, { src: 'None', value: null }),
  );
  if (depth <= 1) return leaf;
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.array(pyValue(depth - 1), { maxLength: 3 }), fc.boolean()).map(([items, tuple]) => ({
        src: tuple ? `(${items.map((i) => i.src).join(', ')}${items.length === 1 ? ',' : ''})` : `[${items.map((i) => i.src).join(', ')}]`,
        value: items.map((i) => i.value),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.array(fc.tuple(fc.string({ maxLength: 4 }), pyValue(depth - 1)), { maxLength: 3 }).map((entries) => ({
        src: `{${entries.map(([k, v]) => `${pyString(k, '"')}: ${v.src}`).join(', ')}}`,
        value: Object.fromEntries(entries.map(([k, v]) => [k, v.value])),
      })),
    },
  );
});

const evalPy = (source: string): unknown => {
  const [call] = callsOf(whole(make(), `[f(v=${source})]`));
  return call?.args.v;
};

// Values no literal of ours reads, some holding brackets, quotes or a comment that the bad call's end is found past.
const badValue = fc.constantFrom("b'z'", '1e999', 'foo', '{1, 2}', "f(')')", "[x, '''a)\n''']", '1 # )\n', "'a' + 'b'", '(1, 2]', "'it's'");

const callList = fc
  .array(
    fc.record({
      name: fc.constantFrom('get_weather', 'search', 'f', 'run_code'),
      kwargs: fc.uniqueArray(fc.tuple(fc.constantFrom('city', 'q', 'n', 'code', 'opts', 'x'), fc.oneof({ weight: 6, arbitrary: pyValue(3).map((v) => v.src) }, { weight: 1, arbitrary: badValue })), {
        maxLength: 3,
        selector: ([k]) => k,
      }),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((calls) => `[${calls.map((c) => `${c.name}(${c.kwargs.map(([k, v]) => `${k}=${v}`).join(', ')})`).join(', ')}]`);

const fragments = [
  '[', ']', '(', ')', '=', ',', ' ', '\n', 'get_weather', 'f', '(city=', "'Paris'", '"a\\"b"', "'''x\n'''", 'True', 'None', '1.5', '-2',
  '{', '}', ':', '<|python_start|>', '<|python_', 'end|>', '<|python_end|>', 'text ', '😀', '你好', '\\', '"', "'", 'r"', '#',
  '\uD83D', '\uDE00', ';',
];

const modelOutput = fc.oneof(
  fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 30 }).map((p) => p.join('')),
  fc.tuple(fc.constantFrom('', 'Sure. ', 'ok <|python_start|>'), callList, fc.constantFrom('', ' Done.', '<|python_end|>', ']', ';', ';\n', '; Done.', ';;'), fc.nat()).map(
    // Sometimes cut the list off, as max_tokens would.
    ([before, list, after, cut]) => (cut % 4 === 0 ? before + list.slice(0, cut % (list.length + 1)) : before + list + after),
  ),
);

describe('pythonic parser: properties', () => {
  splitInvarianceProperties(make(), modelOutput, { runs: 120 });

  it('round-trips any literal to its JSON value', () => {
    fc.assert(
      fc.property(pyValue(3), ({ src, value }) => {
        expect(evalPy(src)).toEqual(value);
      }),
      { numRuns: 200 },
    );
  });

  it('never changes text that holds no "[" or wrapper token', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((t) => !t.includes('[') && !t.includes('<|python')), (input) => {
        expect(textOf(feed(make(), input.split('')))).toBe(input);
      }),
      { numRuns: 100 },
    );
  });
});
