import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createHermesParser, type HermesParserOptions } from '../../parsers/formats/hermes-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, line, malformedOf, perChar, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const make = (options?: HermesParserOptions) => () => createHermesParser(options);
const parse = (input: string, options?: HermesParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

describe('hermes parser: calls', () => {
  it('emits each field at the character that closes it, with the raw arguments around them', () => {
    const input = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon, France", "days": 3}}\n</tool_call>';
    expect(parse(input)).toEqual([
      text('Sure.'),
      start('get_weather'),
      args('{"city": "Lyon, France"'),
      field(['city'], 'Lyon, France'),
      args(', "days": 3'),
      field(['days'], 3),
      args('}'),
      end({ city: 'Lyon, France', days: 3 }),
    ]);
  });

  it('makes repeated blocks parallel calls with their own ids, and keeps text after them', () => {
    const input = '<tool_call>{"name": "search", "arguments": {"q": "otters"}}</tool_call>\n<tool_call>{"name": "search", "arguments": {"q": "beavers"}}</tool_call> Done.';
    const events = parse(input, { callIdPrefix: 'call_r2_' });
    expect(callsOf(events)).toEqual([
      { callId: 'call_r2_1', name: 'search', args: { q: 'otters' }, argsText: '{"q": "otters"}' },
      { callId: 'call_r2_2', name: 'search', args: { q: 'beavers' }, argsText: '{"q": "beavers"}' },
    ]);
    expect(textOf(events)).toBe(' Done.');
  });

  it('takes whitespace between calls and after the last one as frame, not content, streamed or whole', () => {
    const call = (name: string) => `<tool_call>\n{"name": "${name}", "arguments": {}}\n</tool_call>`;
    const input = `I will check both.\n${call('a')}\n${call('b')}\n\n${call('c')}\n`;
    const expected = parse(input);
    expect(callsOf(expected).map((c) => c.name)).toEqual(['a', 'b', 'c']);
    expect(expected.filter((e) => e.type === 'text')).toEqual([text('I will check both.\n')]);
    for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
    expect(coalesceText(feed(make(), input.split('')))).toEqual(expected);
    // It belongs to the next frame: if that becomes text (prose, a broken call, a cut marker), so does it.
    expect(textOf(parse(`${call('a')}\n<tool_call> is the tag`))).toBe('\n<tool_call> is the tag');
    expect(textOf(parse(`${call('a')}\n<tool_call>{"name": 1}</tool_call>`))).toBe('\n<tool_call>{"name": 1}</tool_call>');
    expect(textOf(parse(`${call('a')}\n<tool_`))).toBe('\n<tool_');
    // Followed by other text, it goes out with it.
    expect(textOf(parse(`${call('a')}\n\nDone.`))).toBe('\n\nDone.');
  });

  it('keeps booleans, null, numbers, empty containers and nesting exactly as written', () => {
    const argsText = '{"trigger": true, "none": null, "n": -1.5e3, "empty": {}, "list": [], "deep": {"a": [1, {"b": false}]}}';
    const [call] = callsOf(parse(`<tool_call>{"name": "f", "arguments": ${argsText}}</tool_call>`));
    expect(call!.argsText).toBe(argsText);
    expect(call!.args).toEqual({ trigger: true, none: null, n: -1500, empty: {}, list: [], deep: { a: [1, { b: false }] } });
  });

  it('decodes escapes and surrogate pairs but forwards the arguments never re-serialised', () => {
    const argsText = '{"s": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/", "raw": "😀 你好"}';
    const events = parse(`<tool_call>{"name": "f", "arguments": ${argsText}}</tool_call>`);
    expect(callsOf(events)[0]!.argsText).toBe(argsText);
    expect(callsOf(events)[0]!.args).toEqual({ s: 'café 😀 "q" \\ /', raw: '😀 你好' });
  });

  it('takes the name from the top level even when the arguments come first or contain "name"', () => {
    const events = parse('<tool_call>{"arguments": {"name": "Ada", "n": 1}, "name": "get_age"}</tool_call>');
    expect(events).toEqual([
      start('get_age'),
      args('{"name": "Ada"'),
      field(['name'], 'Ada'),
      args(', "n": 1'),
      field(['n'], 1),
      args('}'),
      end({ name: 'Ada', n: 1 }),
    ]);
  });

  it('streams the code argument of a python call as lines while it is still being written', () => {
    const input = '<tool_call>{"name": "python", "arguments": {"code": "import math\\nprint(math.pi)\\nx = 1"}}</tool_call>';
    const events = parse(input);
    expect(events.filter((e) => e.type === 'call-piece')).toEqual([
      line('import math\n', 1),
      line('print(math.pi)\n', 2),
      line('x = 1', 3),
      field(['code'], 'import math\nprint(math.pi)\nx = 1'),
    ]);
    // The first line is out as soon as its "\n" escape is complete, long before the call ends.
    const deltas = ['<tool_call>{"name": "python", "arguments": {"code": "import math\\', 'n', 'print('];
    const parser = createHermesParser();
    const seen = deltas.map((d) => parser.push(d));
    expect(seen[1]).toContainEqual(line('import math\n', 1));
  });

  it('releases queued lines and fields in order right after call-start when the arguments come first', () => {
    const events = parse('<tool_call>{"arguments": {"code": "a = 1\\nb = 2"}, "name": "python"}</tool_call>');
    expect(events).toEqual([
      start('python'),
      args('{"code": "a = 1\\n'),
      line('a = 1\n', 1),
      args('b = 2"'),
      line('b = 2', 2),
      field(['code'], 'a = 1\nb = 2'),
      args('}'),
      end({ code: 'a = 1\nb = 2' }),
    ]);
  });

  it('honours lineFields and maxFieldDepth', () => {
    const input = '<tool_call>{"name": "sh", "arguments": {"cmd": "ls\\npwd", "o": {"a": {"b": 1}}}}</tool_call>';
    const pieces = parse(input, { lineFields: { sh: 'cmd' }, maxFieldDepth: 1 }).filter((e) => e.type === 'call-piece');
    expect(pieces).toEqual([line('ls\n', 1), line('pwd', 2), field(['cmd'], 'ls\npwd'), field(['o'], { a: { b: 1 } })]);
  });

  it('scans each parser by its own lineFields and maxFieldDepth, whatever other parsers were made with', () => {
    // The scanner's options are shared by every parser with equal options (call-object-scanner-options.ts):
    // parsers with other options, made in turn or alternately, must not get each other's.
    const input = '<tool_call>{"name": "sh", "arguments": {"cmd": "ls\\npwd", "o": {"a": 1}}}</tool_call>';
    const pieces = (options: HermesParserOptions) => parse(input, options).filter((e) => e.type === 'call-piece');
    for (let round = 0; round < 2; round++) {
      expect(pieces({ lineFields: { sh: 'cmd' }, maxFieldDepth: 1 })).toEqual([line('ls\n', 1), line('pwd', 2), field(['cmd'], 'ls\npwd'), field(['o'], { a: 1 })]);
      expect(pieces({ lineFields: { sh: 'other' } })).toEqual([field(['cmd'], 'ls\npwd'), field(['o', 'a'], 1), field(['o'], { a: 1 })]);
      expect(pieces({ callIdPrefix: `r${round}_`, lineFields: { '*': 'cmd' }, maxFieldDepth: 1 })).toEqual([
        line('ls\n', 1, `r${round}_1`),
        line('pwd', 2, `r${round}_1`),
        field(['cmd'], 'ls\npwd', `r${round}_1`),
        field(['o'], { a: 1 }, `r${round}_1`),
      ]);
    }
  });

  it('ends a call at end() when the object is complete but </tool_call> never came', () => {
    const events = parse('<tool_call>\n{"name": "final_answer", "arguments": {"trigger": false}}\n</tool_');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'final_answer', args: { trigger: false }, argsText: '{"trigger": false}' }]);
    expect(textOf(events)).toBe('');
  });

  it('releases a next <tool_call> the end cut, with the whitespace before it, as text after the call it follows', () => {
    // The model stopped mid-tag (max_tokens) after a complete object: the cut start marker is text it
    // wrote, as it is after a </tool_call> or in prose; only a cut end marker (above) is the call's frame.
    for (const input of ['<tool_call>{"name": "a", "arguments": {}}\n<tool_ca', '<tool_call>{"name": "a", "arguments": {}}<']) {
      const tail = input.slice(input.indexOf('}}') + 2);
      for (const events of [parse(input), perChar(make(), input)]) {
        expect(events.slice(-2)).toEqual([end({}), text(tail)]);
      }
    }
  });

  it('ends a call at the next <tool_call> when </tool_call> is missing', () => {
    const events = parse('<tool_call>{"name": "a", "arguments": {}}\n<tool_call>{"name": "b", "arguments": {}}</tool_call>');
    expect(callsOf(events).map((c) => c.name)).toEqual(['a', 'b']);
  });
});

describe('hermes parser: what is not a call', () => {
  it('releases a literal <tool_call> in prose as text', () => {
    const input = 'Wrap calls in <tool_call> tags, like <tool_call> this.</tool_call>';
    expect(parse(input)).toEqual([text(input)]);
  });

  it('reports a call truncated by max_tokens as malformed and returns its text as content', () => {
    const input = 'Checking.<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}';
    const events = parse(input);
    expect(callsOf(events)).toEqual([]);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated call' }]);
    expect(textOf(events)).toBe(input);
  });

  it('fails a call at the first impossible character and resumes there', () => {
    const input = '<tool_call>{"name": "f", "arguments": {"a": 1]}</tool_call> after';
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'malformed JSON: unexpected "]", expected "," or "}"' }]);
    expect(textOf(events)).toBe(input);
  });

  it('fails junk between the object and </tool_call>', () => {
    const input = '<tool_call>{"name": "f", "arguments": {}}}</tool_call>';
    const events = parse(input);
    expect(callsOf(events)).toEqual([]);
    expect(malformedOf(events)).toHaveLength(1);
    expect(textOf(events)).toBe(input);
  });

  it('fails an object without a name or with a non-string name, before any call-start', () => {
    for (const input of ['<tool_call>{"arguments": {}}</tool_call>', '<tool_call>{"name": 7}</tool_call>']) {
      const events = parse(input);
      expect(events.filter((e) => e.type === 'call-start')).toEqual([]);
      expect(malformedOf(events)).toHaveLength(1);
      expect(textOf(events)).toBe(input);
    }
  });

  it('fails arguments that are not an object, nor a string holding one', () => {
    for (const [value, reason] of [
      ['[1]', '"arguments" must be a JSON object'],
      ['"hello"', '"arguments" is a string that does not hold one JSON object'],
      ['"{\\"a\\": 1} {}"', '"arguments" is a string that does not hold one JSON object'],
      // Regression: the reason read as above for these too, hiding what was wrong inside the string.
      ['"{\\"a\\": 1, \\"a\\": 2}"', '"arguments" is a string that does not hold one JSON object: malformed arguments: duplicate key "a"'],
      ['"{\\"a\\": [1"', '"arguments" is a string that does not hold one JSON object: truncated arguments'],
    ]) {
      const input = `<tool_call>{"name": "f", "arguments": ${value}}</tool_call>`;
      const events = parse(input);
      expect(callsOf(events), value).toEqual([]);
      expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason }]);
      expect(textOf(events)).toBe(input);
    }
  });

  it("decodes arguments sent as a string holding the JSON object once (Granite 4), as vLLM's hermes parser does", () => {
    const input = '<tool_call>{"name": "python", "arguments": " {\\"code\\": \\"a = 1\\\\nprint(a)\\\\n\\"} "}</tool_call>';
    for (const events of [parse(input), feed(make(), input.split(''))]) {
      expectWellFormedCalls(events);
      expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([['python', { code: 'a = 1\nprint(a)\n' }, '{"code": "a = 1\\nprint(a)\\n"}']]);
      // The pieces the object itself would give: its lines and its field.
      expect(events.flatMap((e) => (e.type === 'call-piece' ? [e.piece] : []))).toEqual([
        { kind: 'line', text: 'a = 1\n', lineNo: 1 },
        { kind: 'line', text: 'print(a)\n', lineNo: 2 },
        { kind: 'field', path: ['code'], value: 'a = 1\nprint(a)\n' },
      ]);
      expect(textOf(events)).toBe('');
    }
  });

  it('streams string-held arguments when that string closes, before the rest of the call object (the tool can start earlier)', () => {
    // Name first: the decoded arguments follow call-start at the string's closing quote.
    const head = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"';
    const first = createHermesParser();
    expect(first.push(head)).toEqual([start('f'), args('{"a": 1'), field(['a'], 1), args('}')]);
    expect([...first.push(', "extra": true}</tool_call>'), ...first.end()]).toEqual([end({ a: 1 })]);
    // Name after: they come right after call-start, at the name's closing quote.
    const second = createHermesParser();
    expect(second.push('<tool_call>{"arguments": "{\\"a\\": 1}"')).toEqual([]);
    expect(second.push(', "name": "f"')).toEqual([start('f'), args('{"a": 1'), field(['a'], 1), args('}')]);
    // A string that holds no object breaks the call at its closing quote, the first character where that is certain.
    const third = createHermesParser();
    const events = third.push('<tool_call>{"name": "f", "arguments": "tall"');
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: '"arguments" is a string that does not hold one JSON object' }]);
  });

  it('refuses tools outside the whitelist', () => {
    const input = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>';
    const events = parse(input, { tools: ['get_weather'] });
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: 'unknown tool "rm_rf"' }]);
    expect(events.filter((e) => e.type === 'call-start')).toEqual([]);
    expect(textOf(events)).toBe(input);
  });

  it('is registered as "hermes" and validates its options', () => {
    expect(parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>')).toEqual(whole(() => createParser('hermes'), '<tool_call>{"name": "f", "arguments": {}}</tool_call>'));
    expect(() => createParser('hermes', { maxFieldDepth: 0 })).toThrow(InvalidRequestError);
    expect(() => createParser('hermes', { bogus: 1 } as never)).toThrow(InvalidRequestError);
  });
});

const render = (c: GeneratedCall, ws: string) => `<tool_call>${ws}{"name": ${JSON.stringify(c.name)}, "arguments": ${c.argsText}}${ws}</tool_call>`;
const ws = fc.constantFrom('', '\n', ' ', '\n\n');
const safeProse = prose(['<tool_call', '</tool_call>', '<tool_call> not json', '<tool_', '{"name": "x", "arguments": {}}']);
/** The content of `parts`: their prose, less whitespace-only prose before, between and after calls. */
const contentOf = (parts: ReadonlyArray<{ prose: string } | { call: GeneratedCall }>) => {
  let content = '';
  // The output's start is as after a call: whitespace alone there before a call is frame too.
  let run: string | undefined = '';
  let calls = 0;
  const flush = () => {
    if (run !== undefined && !/^[ \n\r\t]*$/.test(run)) content += run;
    run = undefined;
  };
  for (const p of parts) {
    if (!('prose' in p)) {
      flush();
      calls += 1;
      run = '';
    } else if (run !== undefined) run += p.prose;
    else content += p.prose;
  }
  if (calls === 0 && run !== undefined) content += run;
  else flush();
  return content;
};
const wellFormed = fc.array(fc.oneof(safeProse.map((p) => ({ prose: p })), fc.record({ call: generatedCall, ws })), { maxLength: 5 });

describe('hermes parser: properties', () => {
  it('recovers every call exactly, and every other character as text', () => {
    fc.assert(
      fc.property(wellFormed, groupings, (parts, sizes) => {
        const input = parts.map((p) => ('prose' in p ? p.prose : render(p.call, p.ws))).join('');
        const calls = parts.flatMap((p) => ('call' in p ? [p.call] : []));
        // Prose pieces that join into a marker ("<tool_call" + ">") make a real call: not prose.
        fc.pre(input.split('<tool_call>').length - 1 === calls.length);
        for (const events of [whole(make(), input), feed(make(), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events).map((c) => ({ name: c.name, args: c.args, argsText: c.argsText }))).toEqual(calls.map((c) => ({ name: c.name, args: c.args, argsText: c.argsText })));
          expect(textOf(events)).toBe(contentOf(parts));
          expect(malformedOf(events)).toEqual([]);
          expectNoHalfCharacters(events, input);
        }
      }),
      { numRuns: 150 },
    );
  });

  // Wild mixes: broken and truncated calls, markers cut anywhere, junk.
  const fragment = fc.oneof(
    safeProse,
    fc.record({ call: generatedCall, ws }).map(({ call, ws }) => render(call, ws)),
    fc.record({ call: generatedCall, cut: fc.nat() }).map(({ call, cut }) => {
      const full = render(call, '');
      return full.slice(0, cut % full.length);
    }),
    fc.constantFrom('<tool_call>', '</tool_call>', '<tool_call>{', '}', '"', '\\', '😀', '\uD83D'),
  );
  splitInvarianceProperties(make(), fc.array(fragment, { maxLength: 6 }).map((f) => f.join('')), { runs: 120 });
});
