import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createPythonTagParser, type PythonTagParserOptions } from '../../parsers/formats/python-tag-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, group, line, sameEveryWay, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';

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

/** `input`'s events, checked to be the same whole, split anywhere in two, and one character at a time. */
const everyWay = (input: string) => sameEveryWay(make(), input);

// As in llama3-json (882f514): a content delta of whitespace alone reads to an OpenAI client as an
// empty-looking message, and the "\n" a model writes after <|eom_id|> is formatting, not an answer.
describe('python-tag parser: whitespace after a call', () => {
  it('is frame when only the end of the output (and end tokens) follow: no whitespace-only content', () => {
    for (const input of [
      '<|python_tag|>print(1)<|eom_id|>\n',
      '<|python_tag|>print(1)<|eom_id|> \n<|eot_id|>\r\n\t',
      'Let me run it.\n<|python_tag|>print(1)<|eot_id|>\n\n',
    ]) {
      const events = everyWay(input);
      expect(textOf(events), JSON.stringify(input)).toBe(input.startsWith('Let') ? 'Let me run it.\n' : '');
      expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'print(1)' }]);
    }
  });

  it('goes out, unchanged, with the text that follows it: nothing is lost', () => {
    const call = '<|python_tag|>print(1)<|eom_id|>';
    expect(textOf(everyWay(`${call}\n\nDone.`))).toBe('\n\nDone.');
    expect(textOf(everyWay(`${call}\n<|eot_id|>\nafter`))).toBe('\n\nafter');
    expect(textOf(everyWay(`${call}\n<|eo`))).toBe('\n<|eo');
    expect(textOf(everyWay(`${call} <|python_ta`))).toBe(' <|python_ta');
    // A tag followed by JSON is text here (llama3-json's), so the whitespace before it is too.
    expect(textOf(everyWay(`${call}\n<|python_tag|> {"name": "f"}`))).toBe('\n<|python_tag|> {"name": "f"}');
  });

  it('is the frame of a next call, and goes out with its text if the token limit cuts it', () => {
    const events = everyWay('<|python_tag|>a()<|eom_id|>\n<|python_tag|>b()<|eom_id|>\n');
    expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'a()' }, { code: 'b()' }]);
    expect(textOf(events)).toBe('');
    for (const tail of ['b(', '']) {
      const parser = createPythonTagParser();
      const cut = coalesceText([...parser.push(`<|python_tag|>a()<|eom_id|>\n<|python_tag|> ${tail}`), ...parser.end(true)]);
      expect(callsOf(cut)).toHaveLength(1);
      expect(cut.slice(-2)).toEqual([
        tail === '' ? { type: 'malformed', reason: 'truncated call' } : { type: 'malformed', callId: 'call_2', reason: 'truncated call' },
        text(`\n<|python_tag|> ${tail}`),
      ]);
    }
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

  it('takes a tag repeated before the code for frame, not code (Python would fail on it)', () => {
    for (const input of ['<|python_tag|><|python_tag|>print(1)<|eom_id|>', '<|python_tag|>\n<|python_tag|> <|python_tag|>print(1)']) {
      const events = parse(input);
      expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'print(1)' }]);
      expect(textOf(events)).toBe('');
      expect(coalesceText(feed(make(), input.split('')))).toEqual(coalesceText(events));
    }
    // As written, if JSON follows (llama3-json's) or the token limit cuts the call.
    expect(textOf(parse('<|python_tag|><|python_tag|>{"name": "f"}'))).toBe('<|python_tag|><|python_tag|>{"name": "f"}');
    const parser = createPythonTagParser();
    expect(coalesceText([...parser.push('<|python_tag|><|python_tag|>print('), ...parser.end(true)]).slice(-1)).toEqual([text('<|python_tag|><|python_tag|>print(')]);
    // A cut tag at the end is code, as any other text there.
    expect(callsOf(parse('<|python_tag|><|python')).map((c) => c.args)).toEqual([{ code: '<|python' }]);
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
  // A call's end and the whitespace models write after it, which is frame only where no text follows.
  '<|eom_id|>\n', '<|eot_id|> \n', '\n<|python_tag|>',
];
const modelOutput = fc
  .array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fragments) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }), { maxLength: 30 })
  .map((p) => p.join(''));

describe('python-tag parser: properties', () => {
  splitInvarianceProperties(make(), modelOutput, { runs: 150, malformed: false });

  it('loses and repeats nothing: text and code, in order, are the output without its tokens and its frame whitespace', () => {
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
        expect(strip(seen)).toBe(strip(withoutFrameWhitespace(input)));
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

/**
 * `input` less the whitespace that is a call's frame, no more: before a call's tag at the output's
 * start (leading-whitespace.ts), between the tag and its code (tags repeated there too), and after a call's end token when only
 * the end of the output or the next call's tag follows (end tokens between are kept, for `strip`).
 * Any other whitespace, before text or a tag that JSON follows (text here), stays.
 */
function withoutFrameWhitespace(input: string): string {
  const tag = '<|python_tag|>';
  const endToken = (i: number) => ['<|eom_id|>', '<|eot_id|>'].find((t) => input.startsWith(t, i));
  const space = (i: number) => i < input.length && ' \t\n\r'.includes(input[i]!);
  const codeAfter = (tagAt: number) => {
    let j = tagAt + tag.length;
    // The tag written again there is frame like the whitespace (its text stripped anyway).
    while (space(j) || input.startsWith(tag, j)) j += space(j) ? 1 : tag.length;
    return input[j] === '{' ? undefined : j;
  };
  const callAt = (i: number) => input.startsWith(tag, i) && codeAfter(i) !== undefined;
  /** The run of whitespace and end tokens from `i`: its tokens alone, and where it stops, if `dropped(there)`. */
  const frame = (i: number, dropped: (there: number) => boolean) => {
    let j = i;
    let tokens = '';
    for (let token; j < input.length; ) {
      if (space(j)) j++;
      else if ((token = endToken(j)) !== undefined) {
        tokens += token;
        j += token.length;
      } else break;
    }
    return dropped(j) ? { out: tokens, i: j } : { out: '', i };
  };
  let { out, i } = frame(0, callAt);
  let inCode = false;
  while (i < input.length) {
    const token = endToken(i);
    if (inCode && token !== undefined) {
      inCode = false;
      const after = frame(i + token.length, (there) => there === input.length || callAt(there));
      out += token + after.out;
      i = after.i;
    } else if (!inCode && input.startsWith(tag, i)) {
      out += tag;
      const code = codeAfter(i);
      inCode = code !== undefined;
      i = code ?? i + tag.length;
    } else out += input[i++];
  }
  return out;
}
