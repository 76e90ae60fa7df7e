import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createPythonTagParser, type PythonTagParserOptions } from '../../parsers/formats/python-tag-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, group, line, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';

const make = (options?: PythonTagParserOptions) => () => createPythonTagParser(options);
const parse = (input: string, options?: PythonTagParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

describe('python-tag parser: whitespace after the tag', () => {
  it('is taken as it comes: then code (without it), JSON (text, with it), or the end (empty code)', () => {
    const spaces = ' \n'.repeat(5000);
    const both = (input: string) => {
      const events = parse(input);
      expect(coalesceText(feed(make(), input.match(/[^]{1,3}/g)!))).toEqual(coalesceText(events));
      return events;
    };
    expect(callsOf(both(`<|python_tag|>${spaces}print(1)<|eom_id|>`)).map((c) => c.args)).toEqual([{ code: 'print(1)' }]);
    expect(both(`<|python_tag|>${spaces}{"name": "f"}`)).toEqual([text(`<|python_tag|>${spaces}{"name": "f"}`)]);
    expect(callsOf(both(`<|python_tag|>${spaces}`)).map((c) => c.args)).toEqual([{ code: '' }]);
  });

  // `<|python_tag|> print(1)` run as written is an IndentationError ("unexpected indent").
  it('is not part of the code: only the leading run goes, indentation inside the code stays', () => {
    expect(callsOf(parse('<|python_tag|> print(1)<|eom_id|>'))).toEqual([
      { callId: 'call_1', name: 'python', args: { code: 'print(1)' }, argsText: '{"code":"print(1)"}' },
    ]);
    const input = '<|python_tag|>\n\t \r\nif x:\n    y()\n  \nz()<|eom_id|>';
    expect(parse(input)).toEqual([
      start('python'),
      args('{"code":"'),
      line('if x:\n', 1),
      args('if x:\\n'),
      line('    y()\n', 2),
      args('    y()\\n'),
      line('  \n', 3),
      args('  \\n'),
      line('z()', 4),
      args('z()"}'),
      end({ code: 'if x:\n    y()\n  \nz()' }),
    ]);
    for (const deltas of [input.split(''), ['<|python_tag|>\n', '\t \r\nif', ' x:\n', '    y()\n  \nz()<|eom_id|>']]) {
      expect(feed(make(), deltas)).toEqual(parse(input));
    }
  });

  it('streams nothing for a delta of whitespace alone, then the code as it comes', () => {
    const parser = createPythonTagParser();
    expect(parser.push('<|python_tag|>')).toEqual([]);
    expect(parser.push(' \n')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('x = 1')).toEqual([start('python'), args('{"code":"')]);
    expect(parser.push('\n  y')).toEqual([line('x = 1\n', 1), args('x = 1\\n')]);
    expect(parser.push('<|eom_id|>')).toEqual([line('  y', 2), args('  y"}'), end({ code: 'x = 1\n  y' })]);
  });

  it('goes out with the code when the token limit cuts it: the text is as the model wrote it', () => {
    const parser = createPythonTagParser();
    const events = coalesceText([...parser.push('<|python_tag|>\n x'), ...parser.end(true)]);
    expect(events.slice(-2)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated call' }, text('<|python_tag|>\n x')]);
  });
});

describe('python-tag parser (Llama 3.1 code interpreter)', () => {
  it('turns the code after <|python_tag|> into a python call with one piece per line', () => {
    const input = 'Let me compute that.<|python_tag|>import math\nr = 2\nprint(math.pi * r ** 2)<|eom_id|>';
    expect(parse(input)).toEqual([
      text('Let me compute that.'),
      start('python'),
      args('{"code":"'),
      line('import math\n', 1),
      args('import math\\n'),
      line('r = 2\n', 2),
      args('r = 2\\n'),
      line('print(math.pi * r ** 2)', 3),
      args('print(math.pi * r ** 2)"}'),
      end({ code: 'import math\nr = 2\nprint(math.pi * r ** 2)' }),
    ]);
  });

  it('emits each line as soon as its newline arrives', () => {
    const parser = createPythonTagParser();
    expect(parser.push('<|python_tag|>x = 1')).toEqual([start('python'), args('{"code":"')]);
    expect(parser.push('\ny')).toEqual([line('x = 1\n', 1), args('x = 1\\n')]);
    expect(parser.push(' = 2<|eo')).toEqual([]);
    expect(parser.push('t_id|>')).toEqual([line('y = 2', 2), args('y = 2"}'), end({ code: 'x = 1\ny = 2' })]);
  });

  it('ends the call at end() when the engine stripped the stop token', () => {
    const events = parse('<|python_tag|>print("héllo 😀")\n');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'python', args: { code: 'print("héllo 😀")\n' }, argsText: '{"code":"print(\\"héllo 😀\\")\\n"}' }]);
  });

  it('makes code the token limit cut (end(true)) a malformed call, not run, its text content; a finished call before it stands', () => {
    const input = 'Sure.<|python_tag|>x = 1<|eom_id|><|python_tag|>rows = fetch()\nlimit = 5';
    for (const deltas of [[input], input.split('')]) {
      const parser = createPythonTagParser();
      const events = coalesceText([...deltas.flatMap((d) => parser.push(d)), ...parser.end(true)]);
      expectWellFormedCalls(events);
      expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'x = 1' }]);
      expect(events.slice(-2)).toEqual([{ type: 'malformed', callId: 'call_2', reason: 'truncated call' }, text('<|python_tag|>rows = fetch()\nlimit = 5')]);
    }
    // Cut right after the tag: no call had begun.
    const parser = createPythonTagParser();
    expect(coalesceText([...parser.push('<|python_tag|> '), ...parser.end(true)])).toEqual([{ type: 'malformed', reason: 'truncated call' }, text('<|python_tag|> ')]);
  });

  it('keeps text after the end token and handles several calls', () => {
    const events = parse('<|python_tag|>a()<|eom_id|>Now the second:<|python_tag|>b()<|eom_id|>Done.', { callIdPrefix: 'r2_' });
    expect(callsOf(events).map((c) => [c.callId, c.args.code])).toEqual([
      ['r2_1', 'a()'],
      ['r2_2', 'b()'],
    ]);
    expect(textOf(events)).toBe('Now the second:Done.');
  });

  it('passes built-in tool calls through as code', () => {
    const events = parse('<|python_tag|>brave_search.call(query="Menlo Park weather")<|eom_id|>');
    expect(callsOf(events)[0]!.args).toEqual({ code: 'brave_search.call(query="Menlo Park weather")' });
  });

  it('leaves JSON after the tag to the llama3_json parser: content, unchanged', () => {
    const input = '<|python_tag|> {"name": "get_weather", "parameters": {"city": "Paris"}}';
    expect(parse(input)).toEqual([text(input)]);
  });

  it('treats an empty or whitespace-only body as an empty call', () => {
    expect(callsOf(parse('<|python_tag|><|eom_id|>'))[0]!.args).toEqual({ code: '' });
    expect(callsOf(parse('<|python_tag|>\n'))[0]!.args).toEqual({ code: '' });
  });

  it('drops end tokens outside calls too, as llama3-json does; leaves the rest of the prose unchanged', () => {
    // <|eom_id|> and <|eot_id|> end the message wherever they stand, so they are never an answer:
    // an engine that passes them on (skip_special_tokens off, which <|python_tag|> needs) writes them
    // after a plain answer too. Both Llama 3 formats read them so (llama3-json since 3c9f1e8).
    expect(parse('Hello!<|eot_id|>')).toEqual([text('Hello!')]);
    expect(parse('Use <|python for short; <|eom_id|> is a token.')).toEqual([text('Use <|python for short;  is a token.')]);
    const after = parse('<|python_tag|>print(1)<|eom_id|>Done.<|eot_id|>');
    expect(callsOf(after).map((c) => c.args)).toEqual([{ code: 'print(1)' }]);
    expect(textOf(after)).toBe('Done.');
    // What only starts like one is text, even where the output ends inside it.
    expect(parse('a <|eo b <|eot_id')).toEqual([text('a <|eo b <|eot_id')]);
    // JSON after the tag is llama3-json's, here content: the end token after it is dropped all the same.
    expect(textOf(parse('<|python_tag|>{"name": "f", "parameters": {}}<|eom_id|>'))).toBe('<|python_tag|>{"name": "f", "parameters": {}}');
    // Custom end tokens are the ones dropped.
    expect(textOf(parse('a<|eom_id|>b</code>c', { tag: '<code>', endTokens: ['</code>'] }))).toBe('a<|eom_id|>bc');
  });

  it('honours custom tokens and tool name, and validates options', () => {
    const events = parse('<code>print(1)</code>', { tag: '<code>', endTokens: ['</code>'], toolName: 'exec' });
    expect(callsOf(events)).toMatchObject([{ name: 'exec', args: { code: 'print(1)' } }]);
    expect(() => createPythonTagParser({ endTokens: [] })).toThrow(InvalidRequestError);
    expect(callsOf(whole(() => createParser('python-tag'), '<|python_tag|>x'))).toHaveLength(1);
  });
});

const fragments = [
  '<|python_tag|>', '<|python_', 'tag|>', '<|eom_id|>', '<|eot_id|>', '<|eo', 'm_id|>', '{', ' ', '\n', 'import math\n', 'print(x)',
  'x < y', '<', '|', 'text ', '😀', '你好', '\r\n', '\uD83D', '\uDE00',
];
const modelOutput = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 30 })
  .map((p) => p.join(''));

describe('python-tag parser: properties', () => {
  splitInvarianceProperties(make(), modelOutput, { runs: 150, malformed: false });

  it('loses and repeats nothing: text and code, in order, are the output without its tokens (and its leading whitespace before a call)', () => {
    const tokens = ['<|python_tag|>', '<|eom_id|>', '<|eot_id|>'];
    const strip = (t: string) => tokens.reduce((acc, token) => acc.replaceAll(token, ''), t);
    fc.assert(
      fc.property(modelOutput, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1 }), (input, sizes) => {
        // Inputs where removing a token spells another one would make the comparison itself ambiguous.
        fc.pre(strip(strip(input)) === strip(input));
        const events = feed(make(), group(input, sizes));
        let seen = '';
        let lines = '';
        for (const e of events) {
          if (e.type === 'text') seen += e.text;
          if (e.type === 'call-piece' && e.piece.kind === 'line') {
            seen += e.piece.text;
            lines += e.piece.text;
          }
          if (e.type === 'call-end') {
            expect(e.args.code).toBe(lines);
            lines = '';
          }
        }
        // Whitespace at the output's start, before the tag, is the call's frame (leading-whitespace.ts).
        expect(strip(seen)).toBe(strip(withoutSpaceBeforeCode(input.replace(/^[ \n\r\t]*(?=<\|python_tag\|>)/, ''))));
      }),
      { numRuns: 150 },
    );
  });

  it('never changes text that holds no tag and no end token', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((t) => !['<|python_tag|>', '<|eom_id|>', '<|eot_id|>'].some((token) => t.includes(token))), (input) => {
        expect(textOf(feed(make(), input.split('')))).toBe(input);
      }),
      { numRuns: 100 },
    );
  });
});

/** `input` less the whitespace between a tag that starts a call and its code, which is no code. */
function withoutSpaceBeforeCode(input: string): string {
  const tag = '<|python_tag|>';
  let out = '';
  let inCode = false;
  for (let i = 0; i < input.length; ) {
    const endToken = ['<|eom_id|>', '<|eot_id|>'].find((t) => input.startsWith(t, i));
    if (inCode && endToken !== undefined) {
      inCode = false;
      out += endToken;
      i += endToken.length;
    } else if (!inCode && input.startsWith(tag, i)) {
      out += tag;
      let j = i + tag.length;
      while (j < input.length && ' \t\n\r'.includes(input[j]!)) j++;
      i = input[j] === '{' ? i + tag.length : j;
      inCode = input[j] !== '{';
    } else out += input[i++];
  }
  return out;
}
