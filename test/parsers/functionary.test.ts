import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFunctionaryV2Parser, type FunctionaryV2ParserOptions } from '../../parsers/formats/functionary-v2-parser.ts';
import { createFunctionaryV3Parser, type FunctionaryV3ParserOptions } from '../../parsers/formats/functionary-v3-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, line, malformedOf, perChar, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const v2 = (options?: FunctionaryV2ParserOptions) => () => createFunctionaryV2Parser(options);
const v3 = (options?: FunctionaryV3ParserOptions) => () => createFunctionaryV3Parser(options);
const parse = (make: ReturnType<typeof v2>, input: string) => {
  const events = whole(make, input);
  expectWellFormedCalls(events);
  return events;
};

describe('functionary v2', () => {
  it('parses a call whose header the prompt pre-filled, one field at a time', () => {
    const input = 'search\n<|content|>{"query": "hello world in python", "site": "stackoverflow.com"}\n<|stop|>';
    expect(parse(v2(), input)).toEqual([
      start('search'),
      args('{"query": "hello world in python"'),
      field(['query'], 'hello world in python'),
      args(', "site": "stackoverflow.com"'),
      field(['site'], 'stackoverflow.com'),
      args('}'),
      end({ query: 'hello world in python', site: 'stackoverflow.com' }),
    ]);
  });

  it('passes `all` messages through as content and ends each call at the next message', () => {
    const input = [
      '<|from|>assistant\n<|recipient|>all\n<|content|>Let me look that up.\n',
      '<|from|>assistant\n<|recipient|>get_weather\n<|content|>{"city": "Hanoi"}\n',
      '<|from|> assistant\n<|recipient|>get_time\n<|content|>{}\n<|stop|>',
    ].join('');
    const events = parse(v2(), input);
    expect(callsOf(events).map((c) => [c.name, c.argsText])).toEqual([
      ['get_weather', '{"city": "Hanoi"}'],
      ['get_time', '{}'],
    ]);
    expect(textOf(events)).toBe('Let me look that up.');
  });

  it('runs raw python for the code interpreter, one line at a time', () => {
    const events = parse(v2(), 'python\n<|content|>import math\nprint(math.pi)\n<|stop|>');
    expect(events).toEqual([
      start('python'),
      args('{"code":"import math\\n'),
      line('import math\n', 1),
      args('print(math.pi)'),
      line('print(math.pi)', 2),
      args('"}'),
      end({ code: 'import math\nprint(math.pi)' }),
    ]);
  });

  it('treats output without a header as content, and fails broken and truncated calls', () => {
    expect(parse(v2(), 'Hello there, how can I help?')).toEqual([text('Hello there, how can I help?')]);
    for (const input of ['f\n<|content|>{"a": 1', 'f\n<|content|>{"a": 1} junk<|stop|>']) {
      const events = parse(v2(), input);
      expect(callsOf(events)).toEqual([]);
      expect(malformedOf(events)).toHaveLength(1);
      expect(coalesceText(feed(v2(), input.split('')))).toEqual(events);
    }
  });

  it('releases the newline before a <|from|> after a call with that header, when the header is not one', () => {
    // As after a content or code body, whose "\n<|from|>" goes out whole when the header fails.
    for (const [body, content] of [
      ['{"a": 1}', '\n<|from|>assistant\nhello'],
      ['print(1)', '\n<|from|>assistant\nhello'],
    ] as const) {
      const input = `python\n<|content|>${body}\n<|from|>assistant\nhello`;
      const events = parse(v2(), input);
      expect(callsOf(events).map((c) => c.name)).toEqual(['python']);
      expect(textOf(events)).toBe(content);
      expect(coalesceText(feed(v2(), input.split('')))).toEqual(events);
    }
  });

  it('releases a next <|from|> the end cut after a call, with the newline before it, as text', () => {
    // The model stopped mid-token: what it wrote of the next header is text, as a header that does not
    // parse is; a cut <|stop|> is the call's frame, as the whole one is.
    for (const [input, tail] of [
      ['f\n<|content|>{"a": 1}\n<|fr', '\n<|fr'],
      ['f\n<|content|>{"a": 1}<|', '<|'],
      ['f\n<|content|>{"a": 1}\n<|st', ''],
    ] as const) {
      for (const events of [parse(v2(), input), perChar(v2(), input)]) {
        expect(callsOf(events).map((c) => c.args)).toEqual([{ a: 1 }]);
        expect(textOf(events)).toBe(tail);
      }
    }
  });

  it('fails raw python the token limit cut (end(true)), v2 and v3 alike: its half line is not run', () => {
    const cases: Array<[ReturnType<typeof v2>, string, string]> = [
      [v2(), 'python\n<|content|>rows = load()\nlimit = 5', 'python\n<|content|>rows = load()\nlimit = 5'],
      [v3(), '>>>python\nrows = load()\nlimit = 5', '>>>python\nrows = load()\nlimit = 5'],
    ];
    for (const [make, input, released] of cases) {
      for (const deltas of [[input], input.split('')]) {
        const parser = make();
        const events = coalesceText([...deltas.flatMap((d) => parser.push(d)), ...parser.end(true)]);
        expectWellFormedCalls(events);
        expect(callsOf(events)).toEqual([]);
        expect(events.slice(-2)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated call' }, text(released)]);
      }
      // Not cut, the stream's end ends the call, the engine having stripped the stop token.
      expect(callsOf(whole(make, input)).map((c) => c.args)).toEqual([{ code: 'rows = load()\nlimit = 5' }]);
    }
  });

  it('is registered as "functionary-v2"', () => {
    expect(whole(() => createParser('functionary-v2', { tools: ['f'] }), 'g\n<|content|>{}')).toEqual([
      { type: 'malformed', reason: 'unknown tool "g"' },
      text('g\n<|content|>{}'),
    ]);
  });
});

describe('functionary v3', () => {
  it('splits content and calls at >>> recipients', () => {
    const input = 'all\nLet me check both.>>>get_weather\n{"city": "Oslo"}\n>>>get_time\n{"tz": "CET"}';
    const events = parse(v3(), input);
    expect(events).toEqual([
      text('Let me check both.'),
      start('get_weather'),
      args('{"city": "Oslo"'),
      field(['city'], 'Oslo'),
      args('}'),
      end({ city: 'Oslo' }),
      start('get_time', 'call_2'),
      args('{"tz": "CET"', 'call_2'),
      field(['tz'], 'CET', 'call_2'),
      args('}', 'call_2'),
      end({ tz: 'CET' }, 'call_2'),
    ]);
  });

  it('accepts a leading >>> and raw python code', () => {
    const events = parse(v3(), '>>>python\nx = 2\nprint(x * 21)>>>all\nDone.');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'python', args: { code: 'x = 2\nprint(x * 21)' }, argsText: '{"code":"x = 2\\nprint(x * 21)"}' }]);
    expect(textOf(events)).toBe('Done.');
  });

  // Functionary's v3 parser (llama3_prompt_template_v3.py) strips each ">>>" segment, so a "\n"
  // before ">>>" is in neither the content nor the code, as the "\n" before <|from|> in v2; here
  // it was content, or code, after those and frame only after JSON arguments.
  it('takes the "\n" before a >>> recipient line as frame after content and code too, as v2 does before <|from|>', () => {
    const cases = [
      ['all\nLet me check.\n>>>get_weather\n{"city": "Oslo"}', 'Let me check.', [['get_weather', { city: 'Oslo' }]]],
      ['>>>python\nx = 2\nprint(x * 21)\n>>>all\nDone.', 'Done.', [['python', { code: 'x = 2\nprint(x * 21)' }]]],
      ['all\nTwo lines:\n\n>>>all\nmore', 'Two lines:\nmore', []],
      // A ">>>" that is text keeps the "\n" before it, and so does a broken call.
      ['all\nType\n>>> print(1)', 'Type\n>>> print(1)', []],
      ['all\nA\n>>>>f\n{}', 'A\n>', [['f', {}]]],
      ['all\nA\n>>>f\n{"a": nul}', 'A\n>>>f\n{"a": nul}', []],
    ] as const;
    for (const [input, content, calls] of cases) {
      const events = parse(v3(), input);
      expect(textOf(events), input).toBe(content);
      expect(callsOf(events).map((c) => [c.name, c.args])).toEqual(calls);
      expect(coalesceText(feed(v3(), input.split('')))).toEqual(coalesceText(events));
    }
    // The code's last line, its "\n" frame, comes when the code ends: at the recipient line after
    // ">>>", which a ">>>" in code does not start (next test).
    const parser = createFunctionaryV3Parser();
    expect(parser.push('python\nx = 1\n').filter((e) => e.type === 'call-piece')).toEqual([]);
    expect(parser.push('>>>all').filter((e) => e.type === 'call-piece')).toEqual([]);
    expect(parser.push('\n').filter((e) => e.type === 'call-piece')).toEqual([line('x = 1', 1)]);
    // v2 reads the same messages the same way.
    const v2Input = '<|from|>assistant\n<|recipient|>all\n<|content|>Let me check.\n<|from|>assistant\n<|recipient|>python\n<|content|>x = 2\n<|stop|>';
    const v3Input = '>>>all\nLet me check.\n>>>python\nx = 2';
    for (const events of [parse(v2(), v2Input), parse(v3(), v3Input)]) {
      expect(textOf(events)).toBe('Let me check.');
      expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'x = 2' }]);
    }
  });

  // Regression: raw code ended at any ">>>", so a doctest or a REPL prompt in a string cut the code
  // there: `def add(a, b):\n    """` ran (a SyntaxError) and the rest of the cell went out as content.
  it('keeps >>> in raw code that starts no recipient line as code, however split', () => {
    const code = 'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\nprint(">>>", add(1, 2))\nx = 1 >>>> 2\n>>>\n';
    // (The "\n" right before a ">>>" recipient line is frame, as ever.)
    for (const [input, content, written] of [
      [`>>>python\n${code}`, '', code],
      [`>>>python\n${code}>>>all\nDone.`, 'Done.', code.slice(0, -1)],
      [`>>>python\n${code}\n>>>all\nDone.`, 'Done.', code],
    ] as const) {
      const events = parse(v3(), input);
      expect(callsOf(events).map((c) => c.args), input).toEqual([{ code: written }]);
      expect(textOf(events)).toBe(content);
      expect(perChar(v3(), input)).toEqual(events);
      for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(v3(), [input.slice(0, cut), input.slice(cut)]))).toEqual(events);
    }
    // The next call's recipient line still ends the code, and a ">>>" the output's end cut is code.
    expect(callsOf(parse(v3(), '>>>python\nprint(1)\n>>>f\n{}')).map((c) => [c.name, c.args])).toEqual([['python', { code: 'print(1)' }], ['f', {}]]);
    expect(callsOf(parse(v3(), '>>>python\nprint(1)\n>>>f')).map((c) => c.args)).toEqual([{ code: 'print(1)\n>>>f' }]);
  });

  it('keeps >>> in prose that is not a recipient line', () => {
    const input = 'all\nIn the REPL type >>> print(1) and press enter.';
    expect(parse(v3(), input)).toEqual([text('In the REPL type >>> print(1) and press enter.')]);
    expect(parse(v3(), 'Plain answer.')).toEqual([text('Plain answer.')]);
  });

  it('releases the whitespace after a call with the >>> it comes before, when that >>> is text or a broken call', () => {
    // Frame before a recipient line (the call and >>>all\n lose it), but text goes out as written.
    for (const [after, content] of [
      ['\n>>> hello', '\n>>> hello'],
      ['\n\n>>>g\n{"b": nul}', '\n\n>>>g\n{"b": nul}'],
      ['\n>>>>x y', '\n>>>>x y'],
      ['\n>>>all\nok', 'ok'],
    ] as const) {
      const input = `f\n{"a": 1}${after}`;
      const events = parse(v3(), input);
      expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
      expect(textOf(events)).toBe(content);
      expect(coalesceText(feed(v3(), input.split('')))).toEqual(events);
    }
  });

  it('fails truncated calls, the same streamed or whole', () => {
    const input = 'get_weather\n{"city": "Os';
    const events = parse(v3(), input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated arguments' }]);
    expect(textOf(events)).toBe(input);
    expect(coalesceText(feed(v3(), input.split('')))).toEqual(events);
  });

  it('is registered as "functionary-v3"', () => {
    expect(callsOf(whole(() => createParser('functionary-v3'), 'f\n{}'))).toHaveLength(1);
  });
});

// Bodies must not contain the format's own markers; a content body ends where the next header starts.
const body = prose(['<|from', '<|stop', '>>', 'all', '|>']).filter((p) => !p.includes('>>>') && !p.includes('<|from|>') && !p.includes('<|stop|>'));
const code = fc.constantFrom('x = 1\n', 'print("é😀")\n', 'for i in range(3):\n    print(i)\n', 'y = 2').map((c) => c);
type Message = { content: string } | { call: GeneratedCall } | { code: string };
const message: fc.Arbitrary<Message> = fc.oneof(body.map((b) => ({ content: b })), generatedCall.map((c) => ({ call: c })), fc.array(code, { minLength: 1, maxLength: 3 }).map((c) => ({ code: c.join('') })));
const expectedCalls = (messages: Message[]) =>
  messages.flatMap((m) => ('call' in m ? [[m.call.name, m.call.args]] : 'code' in m ? [['python', { code: m.code }]] : []));

/** The content messages' text, less whitespace alone before the first call or code (frame: non-stream content is null there too). */
const contentOf = (ms: Message[]) => {
  const first = ms.findIndex((m) => !('content' in m));
  const cut = first === -1 ? ms.length : first;
  const text = (part: Message[]) => part.map((m) => ('content' in m ? m.content : '')).join('');
  const lead = text(ms.slice(0, cut));
  return (first !== -1 && /^[ \n\r\t]*$/.test(lead) ? '' : lead) + text(ms.slice(cut));
};

/**
 * The messages as v3 reads them joined with nothing: a body's last "\n" is the frame before the
 * next ">>>" (Functionary's own parser strips each segment).
 */
const withoutNewlineBeforeNext = (ms: Message[]): Message[] =>
  ms.map((m, i) => {
    if (i === ms.length - 1) return m;
    if ('content' in m && m.content.endsWith('\n')) return { content: m.content.slice(0, -1) };
    if ('code' in m && m.code.endsWith('\n')) return { code: m.code.slice(0, -1) };
    return m;
  });

describe('functionary properties', () => {
  const renderV2 = (messages: Message[], prefilled: boolean) =>
    messages
      .map((m, i) => {
        const header = i === 0 && prefilled ? '' : '<|from|>assistant\n<|recipient|>';
        if ('content' in m) return `${header}all\n<|content|>${m.content}`;
        if ('code' in m) return `${header}python\n<|content|>${m.code}`;
        return `${header}${m.call.name}\n<|content|>${m.call.argsText}`;
      })
      .join('\n');
  // v3's template joins segments with nothing; a model that writes "\n" before ">>>" is read the same.
  const renderV3 = (messages: Message[], prefilled: boolean, join = '') =>
    messages
      .map((m, i) => {
        const head = i === 0 && prefilled ? '' : '>>>';
        if ('content' in m) return `${head}all\n${m.content}`;
        if ('code' in m) return `${head}python\n${m.code}`;
        return `${head}${m.call.name}\n${m.call.argsText}`;
      })
      .join(join);

  it('v2 and v3 recover every call and all content exactly', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), fc.boolean(), fc.constantFrom('', '\n<|stop|>'), groupings, (messages, prefilled, stop, sizes) => {
        // Raw code runs to the next header, so a content body after it is not distinguishable; end with one.
        const ms = messages.filter((m, i) => !('code' in m) || !('content' in (messages[i + 1] ?? {})) || true);
        for (const [make, input, read] of [
          [v2(), renderV2(ms, prefilled) + stop, ms],
          [v3(), renderV3(ms, prefilled), withoutNewlineBeforeNext(ms)],
          [v3(), renderV3(ms, prefilled, '\n'), ms],
        ] as const) {
          for (const events of [whole(make, input), feed(make, groupBy(input, sizes))]) {
            expectWellFormedCalls(events);
            expect(callsOf(events).map((c) => [c.name, c.args])).toEqual(expectedCalls(read));
            expect(textOf(events)).toBe(contentOf(read));
            expect(malformedOf(events)).toEqual([]);
            expectNoHalfCharacters(events, input);
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  const wild = (render: (m: Message[], prefilled: boolean) => string, markers: string[]) =>
    fc
      .array(
        fc.oneof(
          fc.array(message, { minLength: 1, maxLength: 3 }).chain((ms) => fc.boolean().map((p) => render(ms, p))),
          fc.record({ ms: fc.array(message, { minLength: 1, maxLength: 2 }), cut: fc.nat() }).map(({ ms, cut }) => {
            const full = render(ms, false);
            return full.slice(0, cut % full.length);
          }),
          body,
          fc.constantFrom(...markers, '{', '}', '\n', '😀', '\uD83D'),
        ),
        { maxLength: 5 },
      )
      .map((f) => f.join(''));
  describe('v2', () => splitInvarianceProperties(v2(), wild(renderV2, ['<|from|>', '<|recipient|>', '<|content|>', '<|stop|>', 'python\n', `${'n'.repeat(129)}\n`, `<|from|>${' '.repeat(127)}`]), { runs: 80 }));
  describe('v3', () => splitInvarianceProperties(v3(), wild(renderV3, ['>>>', '>>>all\n', '>>>f\n', 'all\n', '>>>>', `>>>${'n'.repeat(127)}`, `${'n'.repeat(129)}\n`]), { runs: 80 }));
});
