import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../core/errors.ts';
import { createMistralParser, type MistralParserOptions } from '../../parsers/formats/mistral-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, malformedOf, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const make = (options?: MistralParserOptions) => () => createMistralParser(options);
const parse = (input: string, options?: MistralParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};
const nameAndArgs = (events: ReturnType<typeof parse>) => callsOf(events).map((c) => [c.name, c.argsText]);

describe('mistral parser: v0.3 lists', () => {
  it('streams a single call, ended by the closing bracket', () => {
    expect(parse('[TOOL_CALLS] [{"name": "add", "arguments": {"a": 2.5, "b": 7}}]')).toEqual([
      start('add'),
      args('{"a": 2.5'),
      field(['a'], 2.5),
      args(', "b": 7'),
      field(['b'], 7),
      args('}'),
      end({ a: 2.5, b: 7 }),
    ]);
  });

  it('ends each call of a parallel list at the comma that starts the next', () => {
    const events = parse('Hello[TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5}}, {"name": "get_current_weather", "arguments": {"city": "Porto"}, "id": "abc123def"}]');
    expect(nameAndArgs(events)).toEqual([
      ['add', '{"a": 3.5}'],
      ['get_current_weather', '{"city": "Porto"}'],
    ]);
    const firstEnd = events.findIndex((e) => e.type === 'call-end');
    expect(events[firstEnd + 1]).toEqual(start('get_current_weather', 'call_2'));
    expect(textOf(events)).toBe('Hello');
  });

  it('takes the name from the object, not from inside the arguments', () => {
    const events = parse('[TOOL_CALLS] [{"arguments": {"name": "Ada Lovelace"}, "name": "get_age"}]');
    expect(callsOf(events)).toEqual([{ callId: 'call_1', name: 'get_age', args: { name: 'Ada Lovelace' }, argsText: '{"name": "Ada Lovelace"}' }]);
  });

  it('keeps text after the list as content', () => {
    const events = parse('[TOOL_CALLS] [{"name": "f", "arguments": {}}]\nextra trailing data');
    expect(nameAndArgs(events)).toEqual([['f', '{}']]);
    expect(textOf(events)).toBe('\nextra trailing data');
  });

  // Regression: the whitespace between two lists (or after the last) went out as content, where
  // v11 calls had it as frame since 335bea1.
  it('takes whitespace between lists and after the last one as frame, in every split', () => {
    const input = 'Sure.[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}]\n\n[TOOL_CALLS] [{"name": "g", "arguments": {}}] [TOOL_CALLS]h[ARGS]{}\n[TOOL_CALLS] []\n';
    const expected = parse(input);
    expect(nameAndArgs(expected)).toEqual([
      ['f', '{"a": 1}'],
      ['g', '{}'],
      ['h', '{}'],
    ]);
    expect(expected.filter((e) => e.type === 'text')).toEqual([text('Sure.')]);
    for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
    expect(coalesceText(feed(make(), input.split('')))).toEqual(expected);
    // Followed by anything else, or by a frame that becomes text, it goes out with that, unchanged.
    const list = '[TOOL_CALLS] [{"name": "f", "arguments": {}}]';
    expect(textOf(parse(`${list} \n Done.`))).toBe(' \n Done.');
    expect(textOf(parse(`${list}\n[TOOL_CALLS] no tool fits`))).toBe('\n[TOOL_CALLS] no tool fits');
    expect(textOf(parse(`${list}\n[TOOL_CALLS] [{"name": "g", "arguments": {"a": }}]`))).toBe('\n[TOOL_CALLS] [{"name": "g", "arguments": {"a": }}]');
    expect(textOf(parse(`${list} [TOOL_CA`))).toBe(' [TOOL_CA');
  });

  it('takes a repeated [TOOL_CALLS] as frame, in every split (vLLM drops every one)', () => {
    for (const input of ['[TOOL_CALLS][TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}]', '[TOOL_CALLS] [TOOL_CALLS][TOOL_CALLS]f[ARGS]{"a": 1}']) {
      const events = parse(input);
      expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['f', { a: 1 }]]);
      expect(textOf(events)).toBe('');
      for (const size of [1, 2, 5]) expect(coalesceText(feed(make(), input.match(new RegExp(`[^]{1,${size}}`, 'g'))!))).toEqual(coalesceText(events));
    }
    // A "[" that starts no marker still opens the list; one that only looked like it is prose.
    expect(textOf(parse('[TOOL_CALLS][TOOL_CALL x'))).toBe('[TOOL_CALLS][TOOL_CALL x');
  });

  it('calls with {} for an item without "arguments", as vLLM reads it (a tool that takes none)', () => {
    const events = parse('[TOOL_CALLS] [{"name": "now"}, {"name": "add", "arguments": {"a": 1}}]');
    expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([
      ['now', {}, '{}'],
      ['add', { a: 1 }, '{"a": 1}'],
    ]);
    expect(malformedOf(events)).toEqual([]);
  });

  it('decodes arguments written as a string holding the JSON object, as hermes does (vLLM takes the item as a call)', () => {
    const events = parse('[TOOL_CALLS] [{"name": "f", "arguments": "{\\"a\\": [1, {\\"b\\": \\"\\\\ud83d\\\\ude00\\"}]}"}, {"name": "g", "arguments": {}}]');
    expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([
      ['f', { a: [1, { b: '😀' }] }, '{"a": [1, {"b": "\\ud83d\\ude00"}]}'],
      ['g', {}, '{}'],
    ]);
    expect(malformedOf(events)).toEqual([]);
    // A string that holds no JSON object is a broken call, its text kept.
    const broken = parse('[TOOL_CALLS] [{"name": "f", "arguments": "a=1"}]');
    expect(malformedOf(broken)).toHaveLength(1);
    expect(textOf(broken)).toBe('[TOOL_CALLS] [{"name": "f", "arguments": "a=1"}]');
  });

  it('accepts a bare object after [TOOL_CALLS]', () => {
    expect(nameAndArgs(parse('[TOOL_CALLS] {"name": "f", "arguments": {"x": [1, 2]}}'))).toEqual([['f', '{"x": [1, 2]}']]);
  });
});

describe('mistral parser: v11+ name[ARGS]', () => {
  it('starts the call at [ARGS] and ends it at the next [TOOL_CALLS]', () => {
    const events = parse('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e[ARGS]{"tz": "CET"}');
    expect(events).toEqual([
      start('get_weather'),
      args('{"city": "Paris"'),
      field(['city'], 'Paris'),
      args('}'),
      end({ city: 'Paris' }),
      start('get_time', 'call_2'),
      args('{"tz": "CET"', 'call_2'),
      field(['tz'], 'CET', 'call_2'),
      args('}', 'call_2'),
      end({ tz: 'CET' }, 'call_2'),
    ]);
  });

  it("takes name{…} without [ARGS]: vLLM's Mistral tokenizer mode drops that token from the text", () => {
    const input = 'Sure.[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}';
    for (const events of [parse(input), feed(make(), input.split(''))]) {
      expectWellFormedCalls(events);
      expect(nameAndArgs(events)).toEqual([
        ['add_this_and_that', '{"a": 3.5, "b": 4}'],
        ['multiply', '{"a": 3, "b": 6}'],
      ]);
      expect(textOf(events)).toBe('Sure.');
    }
    // A name that runs into anything but "{", [ARGS] or [CALL_ID] is still prose.
    expect(textOf(parse('[TOOL_CALLS]add ({"a": 1})'))).toBe('[TOOL_CALLS]add ({"a": 1})');
  });

  it('takes whitespace between calls and after the last one as frame, not content (vLLM has none of it in content)', () => {
    const input = 'Sure.[TOOL_CALLS]f[ARGS]{"a": 1}\n[TOOL_CALLS]g{"b": 2} \n\n[TOOL_CALLS]h[ARGS]{}\n';
    const expected = parse(input);
    expect(nameAndArgs(expected)).toEqual([
      ['f', '{"a": 1}'],
      ['g', '{"b": 2}'],
      ['h', '{}'],
    ]);
    expect(expected.filter((e) => e.type === 'text')).toEqual([text('Sure.')]);
    for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(), [input.slice(0, cut), input.slice(cut)]))).toEqual(expected);
    // Followed by anything else, the whitespace goes out with it, unchanged.
    expect(textOf(parse('[TOOL_CALLS]f[ARGS]{}\n\nDone.'))).toBe('\n\nDone.');
    // It belongs to the next frame: if that becomes text (prose, a broken call, a cut marker), so does it.
    expect(textOf(parse('[TOOL_CALLS]f[ARGS]{}\n[TOOL_CALLS] no tool fits'))).toBe('\n[TOOL_CALLS] no tool fits');
    expect(textOf(parse('[TOOL_CALLS]f[ARGS]{}\n[TOOL_CALLS]g[ARGS]{"a": }'))).toBe('\n[TOOL_CALLS]g[ARGS]{"a": }');
    expect(textOf(parse('[TOOL_CALLS]f[ARGS]{} [TOOL_CA'))).toBe(' [TOOL_CA');
  });

  it('streams the code of a python call as lines', () => {
    const events = parse('[TOOL_CALLS]python[ARGS]{"code": "a = 1\\nprint(a)\\n"}');
    expect(events.filter((e) => e.type === 'call-piece').map((e) => e.type === 'call-piece' && e.piece)).toEqual([
      { kind: 'line', text: 'a = 1\n', lineNo: 1 },
      { kind: 'line', text: 'print(a)\n', lineNo: 2 },
      { kind: 'field', path: ['code'], value: 'a = 1\nprint(a)\n' },
    ]);
  });
});

describe('mistral parser: what is not a call', () => {
  it('releases [TOOL_CALLS] followed by prose as text', () => {
    for (const input of ['The [TOOL_CALLS] token starts calls.', '[TOOL_CALLS]Sorry, no tool fits.', '[TOOL_CALLS] [1, 2]', '[TOOL_CALLS] []']) {
      const events = parse(input);
      expect(events.filter((e) => e.type !== 'text')).toEqual([]);
      expect(textOf(events)).toBe(input === '[TOOL_CALLS] []' ? '' : input);
    }
  });

  it('reports truncated calls as malformed, the same streamed or whole, and returns their text', () => {
    for (const input of ['[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1', '[TOOL_CALLS]add[ARGS]{"a": 1', '[TOOL_CALLS]add[ARGS]']) {
      const events = parse(input);
      expect(callsOf(events)).toEqual([]);
      expect(malformedOf(events)).toHaveLength(1);
      expect(textOf(events)).toBe(input);
      expect(feed(make(), input.split('')).filter((e) => e.type === 'malformed')).toEqual(malformedOf(events));
    }
  });

  it('reports broken JSON and junk between list items', () => {
    const events = parse('[TOOL_CALLS] [{"name": "a", "arguments": {}} {"name": "b", "arguments": {}}]');
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'expected "," or "]" after a call' }]);
  });

  it('keeps the "," after a finished item in the text of what breaks after it', () => {
    // The call before it ran; the rest reads as the model wrote it, separator included.
    for (const [tail, reason] of [
      [' , 42]', 'expected a call after ","'],
      [', {"name": "g", "arguments": nul}]', '"arguments" must be a JSON object'],
    ] as const) {
      const events = parse(`[TOOL_CALLS] [{"name": "f", "arguments": {}}${tail}`);
      expect(callsOf(events).map((c) => c.name)).toEqual(['f']);
      expect(malformedOf(events).map((e) => e.reason)).toEqual([reason]);
      expect(textOf(events)).toBe(tail);
      expect(coalesceText(feed(make(), `[TOOL_CALLS] [{"name": "f", "arguments": {}}${tail}`.split('')))).toEqual(events);
    }
  });

  it('ends a list at a "]" after a trailing ",", as frame: both calls ran, nothing broke', () => {
    // JSON has no trailing comma, but each item ended (and ran) at its ","; reporting the "]" as a
    // broken call (no call id) and ",]" as content told the client of a failure that was none.
    for (const tail of [',]', ',\n]', ' , ]\n']) {
      const input = `[TOOL_CALLS] [{"name": "f", "arguments": {}}, {"name": "g", "arguments": {"a": 1}}${tail}`;
      const events = parse(input);
      expect(nameAndArgs(events)).toEqual([['f', '{}'], ['g', '{"a": 1}']]);
      expect(malformedOf(events)).toEqual([]);
      expect(textOf(events)).toBe('');
      expect(coalesceText(feed(make(), input.split('')))).toEqual(events);
    }
    expect(textOf(parse('[TOOL_CALLS] [{"name": "f", "arguments": {}},] Done.'))).toBe(' Done.');
  });

  it('refuses tools outside the whitelist', () => {
    const events = parse('[TOOL_CALLS]drop_db[ARGS]{}', { tools: ['add'] });
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: 'unknown tool "drop_db"' }]);
    expect(textOf(events)).toBe('[TOOL_CALLS]drop_db[ARGS]{}');
  });

  it('is registered as "mistral" and validates its options', () => {
    expect(() => createParser('mistral', { tools: [''] })).toThrow(InvalidRequestError);
  });
});

type Group = { prose: string } | { calls: GeneratedCall[]; style: 'list' | 'list-string-args' | 'v11' | 'v11-no-args-token' | 'object'; sep: string };
const render = (g: Exclude<Group, { prose: string }>) => {
  const object = (c: GeneratedCall) => `{"name": ${JSON.stringify(c.name)}, "arguments": ${c.argsText}}`;
  if (g.style === 'list') return `[TOOL_CALLS] [${g.calls.map(object).join(', ')}]`;
  if (g.style === 'list-string-args') return `[TOOL_CALLS] [${g.calls.map((c) => object({ ...c, argsText: JSON.stringify(c.argsText) })).join(', ')}]`;
  if (g.style === 'object') return `[TOOL_CALLS]${object(g.calls[0]!)}`;
  return g.calls.map((c) => `[TOOL_CALLS]${c.name}${g.style === 'v11' ? '[ARGS]' : ''}${c.argsText}`).join(g.sep);
};
/** The content of `groups`: their prose, less whitespace-only prose before, between and after calls (or lists). */
const contentOf = (groups: readonly Group[]) => {
  let content = '';
  // The output's start is as after a call: whitespace alone there before a call is frame too.
  let run: string | undefined = '';
  let calls = 0;
  const flush = () => {
    if (run !== undefined && run.trim() !== '') content += run;
    run = undefined;
  };
  for (const g of groups) {
    if ('prose' in g) {
      if (run !== undefined) run += g.prose;
      else content += g.prose;
    } else {
      flush();
      calls += 1;
      run = '';
    }
  }
  if (calls === 0 && run !== undefined) content += run;
  else flush();
  return content;
};
const safeProse = prose(['[TOOL_CALLS', '[TOOL_', '[TOOL_CALLS] nope', '[ARGS]', 'TOOL_CALLS]']);
const group: fc.Arbitrary<Group> = fc.oneof(
  safeProse.map((p) => ({ prose: p })),
  fc.record({
    calls: fc.array(generatedCall, { minLength: 1, maxLength: 3 }),
    style: fc.constantFrom('list' as const, 'list-string-args' as const, 'v11' as const, 'v11-no-args-token' as const, 'object' as const),
    sep: fc.constantFrom('', '', '\n', ' ', ' \n\n'),
  }),
);
// A call with no end marker (v11, object) ends at the next non-whitespace character, so prose
// after it must not itself continue the JSON: a leading space keeps the example unambiguous.
const doc = fc.array(group, { maxLength: 5 }).map((groups) => groups.map((g) => ('prose' in g ? { prose: ` ${g.prose}` } : g)));

describe('mistral parser: properties', () => {
  it('recovers every call exactly, and every other character as text', () => {
    fc.assert(
      fc.property(doc, groupings, (groups, sizes) => {
        const input = groups.map((g) => ('prose' in g ? g.prose : render(g))).join('');
        const calls = groups.flatMap((g) => ('calls' in g ? (g.style === 'object' ? g.calls.slice(0, 1) : g.calls) : []));
        for (const events of [whole(make(), input), feed(make(), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual(calls.map((c) => [c.name, c.args, c.argsText]));
          expect(textOf(events)).toBe(contentOf(groups));
          expect(malformedOf(events)).toEqual([]);
          expectNoHalfCharacters(events, input);
        }
      }),
      { numRuns: 150 },
    );
  });

  const fragment = fc.oneof(
    safeProse,
    group.map((g) => ('prose' in g ? g.prose : render(g))),
    fc.record({ g: group, cut: fc.nat() }).map(({ g, cut }) => {
      const full = 'prose' in g ? g.prose : render(g);
      return full.slice(0, cut % (full.length + 1));
    }),
    fc.constantFrom('[TOOL_CALLS]', '[TOOL_CALLS] [', '[ARGS]', '[CALL_ID]', ',', ']', '}', '😀', '\uD83D', `[TOOL_CALLS]${'n'.repeat(255)}`, `[TOOL_CALLS]${'n'.repeat(257)}[ARGS]{}`),
  );
  splitInvarianceProperties(make(), fc.array(fragment, { maxLength: 6 }).map((f) => f.join('')), { runs: 120 });
});
