import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createQwen3CoderParser, type Qwen3CoderParserOptions } from '../../parsers/formats/qwen3-coder-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, line, malformedOf, perChar, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';

const make = (options?: Qwen3CoderParserOptions) => () => createQwen3CoderParser(options);
const parse = (input: string, options?: Qwen3CoderParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

const call = (name: string, params: Record<string, string>) =>
  `<tool_call>\n<function=${name}>\n${Object.entries(params)
    .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
    .join('')}</function>\n</tool_call>`;

const tool = (name: string, properties: Record<string, unknown>) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties } } });

describe('qwen3-coder parser: whitespace where a call may start', () => {
  // Taken as it comes, never held and read again with each delta (that was quadratic in its length).
  const spaces = ' \n\t'.repeat(3000);
  const sameStreamed = (input: string, options?: Qwen3CoderParserOptions) => {
    const events = parse(input, options);
    expect(coalesceText(feed(make(options), input.match(/[^]{1,3}/g)!))).toEqual(coalesceText(events));
    return events;
  };

  it('after <tool_call>: then a call, or prose with the whitespace kept', () => {
    const called = sameStreamed(`<tool_call>${spaces}<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>`);
    expect(callsOf(called).map((c) => [c.name, c.args])).toEqual([['f', { a: '1' }]]);
    expect(textOf(sameStreamed(`<tool_call>${spaces}no call`))).toBe(`<tool_call>${spaces}no call`);
  });

  it('reads a long parameter name as it comes (checked a part at a time), and one with a space in it as broken', () => {
    const name = 'p'.repeat(20_000);
    const called = sameStreamed(`<tool_call>\n<function=f>\n<parameter=${name}>\n1\n</parameter>\n</function>\n</tool_call>`);
    expect(callsOf(called).map((c) => Object.keys(c.args))).toEqual([[name]]);
    const broken = sameStreamed(`<tool_call>\n<function=f>\n<parameter=${name} x>\n1\n</parameter>\n</function>\n</tool_call>`);
    expect(malformedOf(broken)).toHaveLength(1);
  });

  it('after a bare <function=name>: then its body makes it a call, prose leaves it text', () => {
    const called = sameStreamed(`<function=f>${spaces}<parameter=a>\n1\n</parameter>\n</function>`);
    expect(callsOf(called).map((c) => [c.name, c.args])).toEqual([['f', { a: '1' }]]);
    const prose = `Use <function=f>${spaces}tags. <function=g> too`;
    expect(sameStreamed(prose)).toEqual([text(prose)]);
    // A tool the request does not offer: the tag stays prose at once.
    const offered = { toolDefinitions: [tool('g', {})] };
    expect(textOf(sameStreamed(`<function=f>${spaces}<parameter=a>\n1\n</parameter>`, offered))).toBe(`<function=f>${spaces}<parameter=a>\n1\n</parameter>`);
  });
});

describe('qwen3-coder parser: calls', () => {
  it('parses a call after content, one field per closed parameter', () => {
    const input = `Sure! Let me check.${call('get_current_weather', { city: 'Dallas', state: 'TX' })}`;
    expect(parse(input)).toEqual([
      text('Sure! Let me check.'),
      start('get_current_weather'),
      field(['city'], 'Dallas'),
      args('{"city":"Dallas"'),
      field(['state'], 'TX'),
      args(',"state":"TX"}'),
      end({ city: 'Dallas', state: 'TX' }),
    ]);
  });

  it('converts values with the tool schema, and keeps strings without one', () => {
    const input = call('test_types', { int_param: '42', float_param: '3.14', bool_param: 'true', str_param: 'hello world', obj_param: '{"key": "value"}', arr: "[1, 'two', None]" });
    const toolDefinitions = [
      tool('test_types', {
        int_param: { type: 'integer' },
        float_param: { type: 'number' },
        bool_param: { type: 'boolean' },
        str_param: { type: 'string' },
        obj_param: { type: 'object' },
        arr: { type: 'array' },
      }),
    ];
    expect(callsOf(parse(input, { toolDefinitions }))[0]!.args).toEqual({
      int_param: 42,
      float_param: 3.14,
      bool_param: true,
      str_param: 'hello world',
      obj_param: { key: 'value' },
      arr: [1, 'two', null],
    });
    expect(callsOf(parse(input))[0]!.args).toEqual({
      int_param: '42',
      float_param: '3.14',
      bool_param: 'true',
      str_param: 'hello world',
      obj_param: '{"key": "value"}',
      arr: "[1, 'two', None]",
    });
  });

  it('keeps values that do not convert as text, and null only where the schema allows it', () => {
    const toolDefinitions = [tool('f', { n: { type: 'integer' }, b: { type: 'boolean' }, s: { type: 'string' }, o: { type: ['string', 'null'] }, x: { type: 'number' } })];
    const input = call('f', { n: 'forty', b: 'yes', s: 'null', o: 'null', x: 'null' });
    expect(callsOf(parse(input, { toolDefinitions }))[0]!.args).toEqual({ n: 'forty', b: 'yes', s: 'null', o: null, x: null });
  });

  it("reads a type from anyOf/oneOf (Pydantic's Optional[T]), and None as null where the schema allows more than a string", () => {
    const optional = (type: string) => ({ anyOf: [{ type }, { type: 'null' }], default: null });
    const toolDefinitions = [
      tool('f', {
        i: optional('integer'),
        o: optional('object'),
        a: optional('array'),
        b: { oneOf: [{ type: 'boolean' }, { type: 'null' }] },
        n: optional('integer'),
        s: optional('string'),
        r: { anyOf: [{ $ref: '#/$defs/Point' }, { type: 'null' }] },
        p: { type: 'integer' },
        t: { type: 'string' },
      }),
    ];
    const input = call('f', { i: '10', o: '{"k": 1}', a: '["a", "b"]', b: 'true', n: 'None', s: '10', r: '{"x": 1}', p: 'None', t: 'None' });
    const [parsed] = callsOf(parse(input, { toolDefinitions }));
    expect(parsed!.args).toEqual({ i: 10, o: { k: 1 }, a: ['a', 'b'], b: true, n: null, s: '10', r: '{"x": 1}', p: null, t: 'None' });
    expect(JSON.parse(parsed!.argsText)).toEqual(parsed!.args);
  });

  // vLLM's qwen3_coder: `param_value.lower() in ("null", "none")` is None for a non-string type, and
  // for a nullable one (anyOf with null) whatever its first type; "none" stayed the text "none" here.
  it('reads none, None and NONE as null, as null and NULL, where the schema allows more than a string', () => {
    const toolDefinitions = [
      tool('f', {
        i: { type: 'integer' },
        o: { type: 'object' },
        b: { type: 'boolean' },
        x: { type: 'number' },
        a: { type: 'array' },
        s: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        t: { type: 'string' },
        u: { type: 'string' },
      }),
    ];
    const input = call('f', { i: 'none', o: 'NONE', b: 'None', x: 'NULL', a: 'Null', s: 'none', t: 'none', u: 'NULL' });
    const [parsed] = callsOf(parse(input, { toolDefinitions }));
    expect(parsed!.args).toEqual({ i: null, o: null, b: null, x: null, a: null, s: null, t: 'none', u: 'NULL' });
    expect(JSON.parse(parsed!.argsText)).toEqual(parsed!.args);
    // Without a schema every value is text.
    expect(callsOf(parse(call('f', { i: 'none' })))[0]!.args).toEqual({ i: 'none' });
  });

  // A union of a string and another type allows more than a string: vLLM's current qwen3_coder reads
  // `type: ["string", "integer"]` as a type that is no string (str() of the list), so "null" is None
  // there; it stayed the text "null" here. anyOf is read the same way, whatever the order of its
  // branches (a JSON-schema union has none): vLLM looks at its first non-null branch only.
  it('reads null as null for a union of a string and another type, given as a type list or as anyOf', () => {
    const toolDefinitions = [
      tool('f', {
        l: { type: ['string', 'integer'] },
        m: { type: ['integer', 'string'] },
        a: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        n: { type: ['string', 'integer'] },
        w: { type: ['string', 'integer'] },
        s: { type: 'string' },
      }),
    ];
    const input = call('f', { l: 'null', m: 'None', a: 'NULL', n: '42', w: 'hello', s: 'null' });
    const [parsed] = callsOf(parse(input, { toolDefinitions }));
    // A value other than null stays text, as before, where a string is allowed.
    expect(parsed!.args).toEqual({ l: null, m: null, a: null, n: '42', w: 'hello', s: 'null' });
    expect(parsed!.argsText).toBe('{"l":null,"m":null,"a":null,"n":"42","w":"hello","s":"null"}');
  });

  // Regression: call-args held JSON.stringify of the converted doubles, so an integer id past 2^53
  // reached the client as 12345678901234567000; vLLM's int() keeps every digit, and json.dumps writes them.
  it('keeps every digit of a big integer in call-args, and writes floats as json.dumps does', () => {
    const toolDefinitions = [tool('f', { id: { type: 'integer' }, n: { type: 'number' }, x: { type: 'number' }, o: { type: 'object' }, l: { type: 'array' } })];
    const input = call('f', { id: '12345678901234567890', n: '-9007199254740993', x: '1e-5', o: '{"id": 18446744073709551616, "r": 1.0, "b": 1, "2": -0}', l: '[9007199254740993, 2.50]' });
    const [result] = callsOf(parse(input, { toolDefinitions }));
    // What vLLM's qwen3_coder sends, less json.dumps's spaces (n: vLLM's float() would round it).
    expect(result!.argsText).toBe('{"id":12345678901234567890,"n":-9007199254740993,"x":1e-05,"o":{"id":18446744073709551616,"r":1.0,"b":1,"2":0},"l":[9007199254740993,2.5]}');
    expect(result!.args).toEqual(JSON.parse(result!.argsText));
    // An array parameter written as a Python literal keeps its digits the same way.
    const literal = call('f', { l: "[12345678901234567890, 'a', 1.0]" });
    expect(callsOf(parse(literal, { toolDefinitions }))[0]!.argsText).toBe('{"l":[12345678901234567890,"a",1.0]}');
  });

  // Regression: `٤٢` for an integer stayed the text "٤٢", where vLLM's int() reads it as 42.
  it("reads digits of any script (Unicode Nd) where the schema says integer or number, as Python's int() and float() do", () => {
    const toolDefinitions = [tool('f', { n: { type: 'integer' }, x: { type: 'number' }, y: { type: 'number' }, m: { type: 'integer' }, s: { type: 'string' }, bad: { type: 'integer' } })];
    // Arabic-Indic, Extended Arabic-Indic (Persian) with Python's underscores, Devanagari, and mathematical bold (astral) digits.
    const input = call('f', { n: '٤٢', x: '-١.٥', y: '۱_۰۰۰', m: ' 𝟒𝟐 ', s: '٤٢', bad: '٤x' });
    const expected = parse(input, { toolDefinitions });
    const [result] = callsOf(expected);
    expect(result!.args).toEqual({ n: 42, x: -1.5, y: 1000, m: 42, s: '٤٢', bad: '٤x' });
    expect(result!.argsText).toBe('{"n":42,"x":-1.5,"y":1000,"m":42,"s":"٤٢","bad":"٤x"}');
    expect(coalesceText(feed(make({ toolDefinitions }), input.split('')))).toEqual(expected);
    expect(callsOf(parse(call('f', { n: '४२' }), { toolDefinitions }))[0]!.args).toEqual({ n: 42 });
  });

  it('handles parallel calls, in separate blocks or one block', () => {
    const input = `${call('a', { x: '1' })}\n${call('b', {})}<tool_call>\n<function=c>\n</function>\n<function=d>\n<parameter=y>\n2\n</parameter>\n</function>\n</tool_call>`;
    const events = parse(input, { callIdPrefix: 'r1_' });
    expect(callsOf(events).map((c) => [c.callId, c.name, c.args])).toEqual([
      ['r1_1', 'a', { x: '1' }],
      ['r1_2', 'b', {}],
      ['r1_3', 'c', {}],
      ['r1_4', 'd', { y: '2' }],
    ]);
    // The "\n" between blocks is frame (qwen3-coder-whitespace-between-blocks.test.ts).
    expect(textOf(events)).toBe('');
  });

  it('takes values as raw text: markup, escapes and unicode stay as written', () => {
    const value = 'if a < b && c > d:\n    print("<tool_call> \\n 你好 😀")\n</para';
    const events = parse(`${call('write_file', { path: 'x.py', content: value })} Done.`);
    expect(callsOf(events)[0]!.args).toEqual({ path: 'x.py', content: value });
    expect(textOf(events)).toBe(' Done.');
  });

  it('strips exactly one leading and one trailing newline, and keeps empty values', () => {
    const input = '<tool_call>\n<function=f>\n<parameter=a>\n\n\nx\n\n</parameter>\n<parameter=b>\n</parameter>\n<parameter=c></parameter>\n</function>\n</tool_call>';
    expect(callsOf(parse(input))[0]!.args).toEqual({ a: '\n\nx\n', b: '', c: '' });
  });

  it('tolerates a missing </parameter> before the next parameter or </function>, as vLLM does', () => {
    const input = '<tool_call>\n<function=f>\n<parameter=a>\n1\n<parameter=b>\n2\n</function>\n</tool_call>';
    expect(callsOf(parse(input))[0]!.args).toEqual({ a: '1', b: '2' });
  });

  it('streams the lines of a code parameter, each once a character follows its newline', () => {
    const parser = createQwen3CoderParser();
    expect(parser.push('<tool_call>\n<function=python>\n<parameter=code>\nimport os\n')).toEqual([start('python')]);
    expect(parser.push('p')).toEqual([line('import os\n', 1)]);
    expect(parser.push('rint(os.getcwd())\n</param')).toEqual([]);
    expect(parser.push('eter>\n</function>\n</tool_call>')).toEqual([
      line('print(os.getcwd())', 2),
      field(['code'], 'import os\nprint(os.getcwd())'),
      args('{"code":"import os\\nprint(os.getcwd())"}'),
      end({ code: 'import os\nprint(os.getcwd())' }),
    ]);
    expect(parser.end()).toEqual([]);
  });

  it('streams lines for the configured tool and parameter only', () => {
    const input = call('shell', { cmd: 'ls\npwd', code: 'x\ny' });
    const lines = (options?: Qwen3CoderParserOptions) => parse(input, options).filter((e) => e.type === 'call-piece' && e.piece.kind === 'line');
    expect(lines()).toEqual([]);
    expect(lines({ lineFields: { shell: 'cmd' } })).toEqual([line('ls\n', 1), line('pwd', 2)]);
    expect(lines({ lineFields: { '*': 'code' } })).toEqual([line('x\n', 1), line('y', 2)]);
  });

  it('is registered as "qwen3-coder" and validates its options', () => {
    expect(callsOf(whole(() => createParser('qwen3-coder'), call('f', {})))).toHaveLength(1);
    expect(() => createQwen3CoderParser({ toolDefinitions: [{ type: 'nope' }] } as never)).toThrow(InvalidRequestError);
  });
});

// Regression: Qwen3-Coder often drops the <tool_call> opener after a sentence of reasoning and
// still writes the closing tag; the call then reached the client as XML text and never ran
// (ollama/ollama#16686, #18530). vLLM's qwen3_coder keys on "<function=" for that reason.
describe('qwen3-coder parser: calls without the <tool_call> opener', () => {
  const bareCall = "I'll fetch the page.\n\n<function=WebFetch>\n<parameter=url>\nhttps://example.com\n</parameter>\n</function>\n</tool_call>";

  it('takes a bare <function=…> with a function body for a call, and drops the orphan </tool_call>', () => {
    expect(parse(`${bareCall}\nDone.`)).toEqual([
      text("I'll fetch the page.\n\n"),
      start('WebFetch'),
      field(['url'], 'https://example.com'),
      args('{"url":"https://example.com"}'),
      end({ url: 'https://example.com' }),
      text('\nDone.'),
    ]);
    expect(callsOf(parse('<function=f>\n</function>')).map((c) => c.args)).toEqual([{}]);
  });

  it.each([
    'Write <function=name> then the parameters.',
    'A <function=f>\nnot a body</function>',
    '<function=a b>\n<parameter=x>\n1\n</parameter>\n</function>',
    'Ends inside: <function=f>\n<param',
  ])('leaves a <function= that no function body follows as prose: %j', (input) => {
    expect(parse(input)).toEqual([text(input)]);
  });

  it('needs, with toolDefinitions, a tool the request offers', () => {
    const toolDefinitions = [tool('get_weather', {})];
    expect(parse(bareCall, { toolDefinitions })).toEqual([text(bareCall)]);
    expect(callsOf(parse(bareCall.replaceAll('WebFetch', 'get_weather'), { toolDefinitions }))).toHaveLength(1);
  });
});

describe('qwen3-coder parser: prose and failures', () => {
  it.each([
    'Wrap calls in <tool_call> tags.',
    'A <tool_call> then <function=a b> is prose.',
    '<tool_call>{"name": "hermes-style"}</tool_call>',
    'Just </function> and </tool_call> and <parameter=x> text.',
  ])('releases a literal marker that never becomes a call: %j', (input) => {
    expect(parse(input)).toEqual([text(input)]);
  });

  it('reports a truncated call as malformed and releases its text, streamed or whole', () => {
    const input = 'Checking.<tool_call>\n<function=get_weather>\n<parameter=city>\nPar';
    const expected = [text('Checking.'), start('get_weather'), { type: 'malformed', callId: 'call_1', reason: expect.stringContaining('ended') }, text(input.slice(9))];
    expect(parse(input)).toEqual(expected);
    const perChar = feed(make(), input.split(''));
    expect(malformedOf(perChar)).toHaveLength(1);
    expect(textOf(perChar)).toBe(input);
  });

  it('ends a call whose output ended after a </parameter>, as vLLM does, unless the output was cut', () => {
    const input = 'Checking.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n';
    for (const events of [parse(input), feed(make(), input.split(''))]) {
      expectWellFormedCalls(events);
      expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
      expect(textOf(events)).toBe('Checking.');
    }
    const parser = createQwen3CoderParser();
    const cut = [...parser.push(input), ...parser.end(true)];
    expect(callsOf(cut)).toEqual([]);
    expect(malformedOf(cut)).toHaveLength(1);
    expect(textOf(cut)).toBe(input);
  });

  it('reports a truncation before the function name without a call id', () => {
    expect(parse('<tool_call>\n<function=get_')).toEqual([{ type: 'malformed', reason: expect.stringContaining('before a function name') }, text('<tool_call>\n<function=get_')]);
  });

  it('reports junk inside a function body, then resumes as prose there', () => {
    const input = '<tool_call>\n<function=f>\noops<parameter=a>\n1\n</parameter>\n</function></tool_call>';
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining('unexpected text') }]);
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe(input);
  });

  it('keeps calls finished before a failure, and what follows an unclosed block', () => {
    const events = parse('<tool_call>\n<function=f>\n</function>\nThe end.');
    expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
    expect(textOf(events)).toBe('\nThe end.');
    expect(malformedOf(events)).toEqual([]);
  });
});

// Regression (review 9): a literal </function>, or a line <parameter=x>, inside a value ended or
// split it where it stood, and the call ran with the value cut there: a model writing a chat
// template, a tool parser or its docs writes such text. As in vLLM's qwen3_coder, a marker in a
// value is structure only when what follows it is, and <parameter=x> only for a parameter of the tool.
describe('qwen3-coder parser: markup inside a value', () => {
  const writeFile = { toolDefinitions: [tool('write_file', { path: { type: 'string' }, content: { type: 'string' } })] };
  const write = (content: string) => call('write_file', { path: 'x.py', content });
  /** The events, the same one character per delta, in 3-character deltas and whole. */
  const sameSplit = (input: string, options?: Qwen3CoderParserOptions) => {
    const events = parse(input, options);
    expect(perChar(make(options), input)).toEqual(events);
    expect(coalesceText(feed(make(options), input.match(/[^]{1,3}/g) ?? []))).toEqual(events);
    return events;
  };
  const argsOf = (input: string, options?: Qwen3CoderParserOptions) => callsOf(sameSplit(input, options)).map((c) => c.args);

  it('a value holding </function> text ran the call with the value cut there', () => {
    const content = 'END = "</function>"\nif line.strip() == "</function>":\n    done()\n</function>\nprint(1)';
    for (const options of [undefined, writeFile]) {
      const events = sameSplit(`${write(content)}\nDone.`, options);
      expect(callsOf(events).map((c) => c.args)).toEqual([{ path: 'x.py', content }]);
      expect(textOf(events)).toBe('\nDone.');
    }
  });

  it('a value holding </function> then </tool_call> text, its </parameter> missing, is not cut there', () => {
    const code = 'END = """</function>\n</tool_call>"""\npass\n</function>\n</tool_call>\nx';
    const input = `<tool_call>\n<function=write_file>\n<parameter=content>\n${code}\n</function>\n</tool_call>`;
    for (const options of [undefined, writeFile]) expect(argsOf(input, options)).toEqual([{ content: code }]);
    // Before the output's end or another call it ends the value.
    expect(argsOf(`${input}\n<tool_call>\n<function=g>\n</function>\n</tool_call>`)).toEqual([{ content: code }, {}]);
  });

  // Review of session 37: decided at the tag, before any name, these cut the value and ran it
  // (and, for the second, a call to zzz, a tool the request does not have).
  it('a value holding </function> then <tool_call> or <function=, its </parameter> missing, is not cut there', () => {
    for (const code of ['END = "</function><tool_call>"\nprint(END)', 'assert parse("<function=a></function><function=zzz></function>") == 2']) {
      const input = `<tool_call>\n<function=write_file>\n<parameter=content>\n${code}\n</parameter>\n</function>\n</tool_call>`;
      for (const options of [undefined, writeFile]) {
        const events = sameSplit(input, options);
        expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['write_file', { content: code }]]);
        expect(textOf(events)).toBe('');
      }
    }
  });

  it('a value holding a line <parameter=x>, x not in the schema, was split there', () => {
    const content = 'Qwen3-Coder writes\n<parameter=city>\nParis\n</parameter>\nthen </function>.';
    expect(argsOf(write(content), writeFile)).toEqual([{ path: 'x.py', content }]);
  });

  it('a value holding a whole example call (a template, a parser test) stays whole, schema or not', () => {
    const example = `Example:\n${call('get_weather', { city: 'Paris', path: '/' })}\n<function=f>\n<parameter=path>\n</parameter>\n</function>\nEnd.`;
    // content before path: the example's <parameter=path> lines are the example's, not the next parameter.
    const input = call('write_file', { content: example, path: 'x.py' });
    for (const options of [undefined, writeFile]) expect(argsOf(input, options)).toEqual([{ content: example, path: 'x.py' }]);
    // Indented in code, and with a </function> inside the example's own value.
    const test = `def test():\n    text = '''\n    ${call('get_weather', { city: '</function>' }).replaceAll('\n', '\n    ')}\n    '''\n    assert parse(text)`;
    for (const options of [undefined, writeFile]) expect(argsOf(call('write_file', { content: test, path: 'x.py' }), options)).toEqual([{ content: test, path: 'x.py' }]);
  });

  it('still ends a value at a real next parameter: after </parameter>, or on its own line without one', () => {
    expect(argsOf(call('write_file', { path: 'x.py', content: 'hi' }), writeFile)).toEqual([{ path: 'x.py', content: 'hi' }]);
    const missing = '<tool_call>\n<function=write_file>\n<parameter=path>\nx.py\n<parameter=content>\nhi\n</function>\n</tool_call>';
    for (const options of [undefined, writeFile]) expect(argsOf(missing, options)).toEqual([{ path: 'x.py', content: 'hi' }]);
    // A line naming a parameter already given (or this one) is the value's, schema or not.
    const nested = 'a\n<parameter=path>\nb\n</parameter>\n<parameter=content>\nc\n</parameter>';
    for (const options of [undefined, writeFile]) expect(argsOf(write(nested), options)).toEqual([{ path: 'x.py', content: nested }]);
    // A <parameter=x> inside a line is text even without a schema.
    expect(argsOf(call('f', { a: 'x <parameter=b> y\n', b: '2' }))).toEqual([{ a: 'x <parameter=b> y\n', b: '2' }]);
  });

  it("takes a </parameter> followed by text, or by a parameter not in the schema, as the value's, as vLLM does", () => {
    const junk = '<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\noops</function></tool_call>';
    expect(argsOf(junk)).toEqual([{ a: '1\n</parameter>\noops' }]);
    const unknown = '<tool_call>\n<function=write_file>\n<parameter=content>\n1\n</parameter>\n<parameter=bogus>\n2\n</parameter>\n</function>\n</tool_call>';
    expect(argsOf(unknown, writeFile)).toEqual([{ content: '1\n</parameter>\n<parameter=bogus>\n2\n</parameter>' }]);
    // Without a schema any parameter is one.
    expect(argsOf(unknown)).toEqual([{ content: '1', bogus: '2' }]);
  });

  it("takes </tool_call> in a value as structure only before another call or the output's end", () => {
    const content = 'STOP = "</tool_call>"\n</tool_call>\nx';
    expect(argsOf(write(content), writeFile)).toEqual([{ path: 'x.py', content }]);
    expect(argsOf('<tool_call>\n<function=f>\n<parameter=a>\n1\n</tool_call>\n<tool_call>\n<function=g>\n</function>\n</tool_call>')).toEqual([{ a: '1' }, {}]);
  });

  it('fires a field once what follows decides it: at the > of the next tag, or at "=" without a schema', () => {
    const parser = createQwen3CoderParser(writeFile);
    expect(parser.push('<tool_call>\n<function=write_file>\n<parameter=path>\nx.py\n</parameter>\n<parameter=conten')).toEqual([start('write_file')]);
    expect(parser.push('t')).toEqual([]);
    expect(parser.push('>')).toEqual([field(['path'], 'x.py'), args('{"path":"x.py"')]);
    expect(parser.push('\nhi\n</parameter>\n</function')).toEqual([]);
    expect(parser.push('>')).toEqual([field(['content'], 'hi'), args(',"content":"hi"}'), end({ path: 'x.py', content: 'hi' })]);
    expect([...parser.push('\n</tool_call>'), ...parser.end()]).toEqual([]);
    const bare = createQwen3CoderParser();
    expect(bare.push('<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter')).toEqual([start('f')]);
    expect(bare.push('=')).toEqual([field(['a'], '1'), args('{"a":"1"')]);
    // A marker that is text goes into the value at the character that shows it.
    const lines = createQwen3CoderParser();
    lines.push('<tool_call>\n<function=python>\n<parameter=code>\nx = 1\n</function>');
    expect(lines.push('"')).toEqual([line('x = 1\n', 1)]);
  });

  it('takes a marker still held when the output ends as structure, cut or not', () => {
    const input = '<function=f>\n<parameter=a>\n1\n</function>\n';
    expect(argsOf(input)).toEqual([{ a: '1' }]);
    // A stop string "</tool_call>" leaves this text, and end(true).
    const parser = createQwen3CoderParser();
    expect(callsOf([...parser.push(input), ...parser.end(true)]).map((c) => c.args)).toEqual([{ a: '1' }]);
    // Prose after it: the value never closed.
    const prose = `${input}Done.`;
    const events = sameSplit(prose);
    expect(malformedOf(events)).toHaveLength(1);
    expect(textOf(events)).toBe(prose);
  });

  it('reads a long run of whitespace after </parameter> as it comes', () => {
    const spaces = ' \n'.repeat(20_000);
    const input = `<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>${spaces}x</parameter>${spaces}</function>\n</tool_call>`;
    expect(argsOf(input)).toEqual([{ a: `1\n</parameter>${spaces}x` }]);
  });
});

const valueText = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '"', '\\', '>', '/', '{', '}', '1', 'é', '😀', 'p', '='), maxLength: 12 }),
  fc.constantFrom('a < b', '<div>', 'x </para y', '<parameter', '{"k": [1, true]}', 'null', '42', 'true', '٤٢', '-١.٥', '𝟒𝟐'),
);
const params = fc.uniqueArray(fc.tuple(fc.constantFrom('code', 'city', 'n', 'flag', 'obj'), valueText), { maxLength: 3, selector: ([k]) => k });
const wellFormed = fc
  .array(fc.tuple(fc.constantFrom('python', 'get_weather', 'f'), params, fc.constantFrom('', 'Text. ', '\n')), { minLength: 1, maxLength: 3 })
  .chain((calls) =>
    fc.nat().map((cut) => {
      // Every other call without its <tool_call> opener, as Qwen3-Coder often writes them.
      const full = calls.map(([name, ps, before], i) => before + call(name, Object.fromEntries(ps)).slice(i % 2 === 0 ? 0 : '<tool_call>\n'.length)).join('');
      return cut % 4 === 0 ? full.slice(0, cut % (full.length + 1)) : full;
    }),
  );

const fragments = [
  '<tool_call>', '</tool_call>', '<function=f>', '<function=', '</function>', '<parameter=a>', '<parameter=', '</parameter>', '<tool_', 'call>',
  '</para', 'meter>', '\n', ' ', 'x', '<', '>', '/', '😀', 'text ', '\uD83D', '\uDE00',
];
const modelOutput = fc.oneof(
  fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 30 }).map((p) => p.join('')),
  wellFormed,
);

const toolDefinitions = [
  tool('python', { code: { type: 'string' } }),
  tool('get_weather', { city: { type: 'string' }, n: { type: 'integer' }, flag: { type: 'boolean' }, obj: { type: 'object' } }),
  tool('f', { n: { type: 'number' }, obj: { type: 'array' } }),
];

describe('qwen3-coder parser: properties', () => {
  splitInvarianceProperties(make(), modelOutput, { runs: 120 });

  describe('with schema types', () => {
    splitInvarianceProperties(make({ toolDefinitions }), modelOutput, { runs: 60 });
  });

  it('round-trips parameter values (one leading and trailing newline aside) and their lines', () => {
    fc.assert(
      fc.property(fc.constantFrom('python', 'f'), params, (name, ps) => {
        const events = whole(make({ lineFields: { '*': 'code' } }), call(name, Object.fromEntries(ps)));
        expect(callsOf(events).map((c) => c.args)).toEqual([Object.fromEntries(ps)]);
        const code = ps.find(([k]) => k === 'code')?.[1];
        const lines = events.flatMap((e) => (e.type === 'call-piece' && e.piece.kind === 'line' ? [e.piece.text] : []));
        expect(lines.join('')).toBe(code ?? '');
      }),
      { numRuns: 150 },
    );
  });
});

// Values built of markup that is the value's wherever it stands (each closing marker followed by
// text, nested examples balanced): they round-trip, and split invariance holds over them.
const markupPiece = fc.constantFrom(
  'a', ' ', '\n', 'x = "</function>"', '</tool_call>', '</parameter>', '<tool_call>', 'use <function=g> tags',
  '\n<parameter=zz>\nv\n</parameter>\n', `\n${call('g', { zz: '1', content: '</function>' })}\n`,
);
const markupValue = fc.array(markupPiece, { maxLength: 6 }).map((pieces) => pieces.join('a'));
const markupTools = { toolDefinitions: [tool('w', { content: { type: 'string' }, path: { type: 'string' } })] };
const markupOutput = fc
  .array(fc.tuple(markupValue, fc.constantFrom('', 'Text. ', '\n'), fc.boolean()), { minLength: 1, maxLength: 3 })
  .chain((calls) =>
    fc.nat().map((cut) => {
      const full = calls.map(([v, before, opener]) => before + call('w', { content: v, path: 'p' }).slice(opener ? 0 : '<tool_call>\n'.length)).join('');
      return cut % 4 === 0 ? full.slice(0, cut % (full.length + 1)) : full;
    }),
  );

describe('qwen3-coder parser: properties of values holding markup', () => {
  splitInvarianceProperties(make(), markupOutput, { runs: 60 });

  describe('with schema types', () => {
    splitInvarianceProperties(make(markupTools), markupOutput, { runs: 60 });
  });

  it('round-trips them with a schema', () => {
    fc.assert(
      fc.property(markupValue, (v) => {
        expect(callsOf(whole(make(markupTools), call('w', { content: v, path: 'p' }))).map((c) => c.args)).toEqual([{ content: v, path: 'p' }]);
      }),
      { numRuns: 200 },
    );
  });
});
