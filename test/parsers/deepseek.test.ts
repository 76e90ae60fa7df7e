import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDeepSeekParser, type DeepSeekParserOptions } from '../../parsers/formats/deepseek-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, malformedOf, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

type Version = 'v3' | 'v31';
const make = (version: Version, options?: DeepSeekParserOptions) => () => createDeepSeekParser(version, options);
const parse = (version: Version, input: string, options?: DeepSeekParserOptions) => {
  const events = whole(make(version, options), input);
  expectWellFormedCalls(events);
  return events;
};
const renderCall = (version: Version, c: GeneratedCall) =>
  version === 'v3' ? `${CALL_BEGIN}function${SEP}${c.name}\n\`\`\`json\n${c.argsText}\n\`\`\`${CALL_END}` : `${CALL_BEGIN}${c.name}${SEP}${c.argsText}${CALL_END}`;

describe('deepseek parser: V3 (fenced arguments)', () => {
  it('streams a call from its name line to <｜tool▁call▁end｜>', () => {
    const input = `Let me check.${CALLS_BEGIN}${CALL_BEGIN}function${SEP}get_weather\n\`\`\`json\n{"city": "Tokyo", "unit": "celsius"}\n\`\`\`${CALL_END}${CALLS_END}`;
    expect(parse('v3', input)).toEqual([
      text('Let me check.'),
      start('get_weather'),
      args('{"city": "Tokyo"'),
      field(['city'], 'Tokyo'),
      args(', "unit": "celsius"'),
      field(['unit'], 'celsius'),
      args('}'),
      end({ city: 'Tokyo', unit: 'celsius' }),
    ]);
  });

  it('treats the whitespace between parallel calls as frame and text after the region as content', () => {
    const input = `${CALLS_BEGIN}\n${renderCall('v3', { name: 'a', args: {}, argsText: '{}' })}\n${renderCall('v3', { name: 'b', args: { x: 1 }, argsText: '{"x":1}' })}\n${CALLS_END} Done.`;
    const events = parse('v3', input);
    expect(callsOf(events).map((c) => [c.callId, c.name, c.argsText])).toEqual([
      ['call_1', 'a', '{}'],
      ['call_2', 'b', '{"x":1}'],
    ]);
    expect(textOf(events)).toBe(' Done.');
  });
});

describe('deepseek parser: V3 arguments without their fence', () => {
  // Regression: the opening ```json was optional but the closing ``` was not, so a V3 call written
  // with bare arguments (`NAME\n{…}<｜tool▁call▁end｜>`) started, streamed its arguments, then broke
  // at <｜tool▁call▁end｜> ("expected ``` after the arguments") and went out as text. The closing
  // fence is expected only where one opened.
  it('ends a call whose arguments have no fence at <｜tool▁call▁end｜>', () => {
    const input = `${CALLS_BEGIN}${CALL_BEGIN}function${SEP}get_weather\n{"city": "Tokyo"}\n${CALL_END}${CALLS_END}`;
    const events = parse('v3', input);
    expect(callsOf(events).map((c) => [c.name, c.argsText])).toEqual([['get_weather', '{"city": "Tokyo"}']]);
    expect(malformedOf(events)).toEqual([]);
    expect(textOf(events)).toBe('');
    expect(coalesceText(feed(make('v3'), input.split('')))).toEqual(events);
  });

  it('still wants the closing ``` where ```json opened the arguments', () => {
    const input = `${CALLS_BEGIN}${CALL_BEGIN}function${SEP}get_weather\n\`\`\`json\n{"city": "Tokyo"}\n${CALL_END}${CALLS_END}`;
    const events = parse('v3', input);
    expect(malformedOf(events)).toHaveLength(1);
    expect(textOf(events)).toBe(input);
  });
});

describe('deepseek parser: V3.1 (bare arguments)', () => {
  it('parses parallel calls verbatim and keeps the text before and after', () => {
    const input = `some prefix text${CALLS_BEGIN}${CALL_BEGIN}foo${SEP}{"x":1}${CALL_END}${CALL_BEGIN}bar${SEP}{"y":2}${CALL_END}${CALLS_END} some suffix text`;
    const events = parse('v31', input);
    expect(callsOf(events).map((c) => [c.name, c.argsText])).toEqual([
      ['foo', '{"x":1}'],
      ['bar', '{"y":2}'],
    ]);
    expect(textOf(events)).toBe('some prefix text some suffix text');
  });

  it('takes whitespace after the region close for frame at the end of the output, and text before text', () => {
    // A "\n" after <｜tool▁calls▁end｜> alone was content: to a client, an empty-looking answer.
    const region = `${CALLS_BEGIN}${CALL_BEGIN}f${SEP}{"a": 1}${CALL_END}${CALLS_END}`;
    for (const [tail, content] of [
      ['\n', ''],
      [' \n\n', ''],
      ['\nDone.', '\nDone.'],
    ] as const) {
      const input = region + tail;
      for (const events of [parse('v31', input), coalesceText(feed(make('v31'), input.split('')))]) {
        expect(callsOf(events).map((c) => c.args)).toEqual([{ a: 1 }]);
        expect(textOf(events)).toBe(content);
      }
    }
  });

  it('streams python code as lines', () => {
    const events = parse('v31', `${CALLS_BEGIN}${CALL_BEGIN}python${SEP}{"code": "import os\\nprint(os.getcwd())"}${CALL_END}${CALLS_END}`);
    expect(events.filter((e) => e.type === 'call-piece').map((e) => e.type === 'call-piece' && e.piece.kind)).toEqual(['line', 'line', 'field']);
  });
});

describe('deepseek parser: failures', () => {
  it.each<[Version, string]>([
    ['v3', `${CALLS_BEGIN}${CALL_BEGIN}function${SEP}get_weather\n\`\`\`json\n{"city": "Tok`],
    ['v31', `${CALLS_BEGIN}${CALL_BEGIN}get_weather${SEP}{"city": "Tok`],
    ['v31', `${CALLS_BEGIN}${CALL_BEGIN}get_wea`],
  ])('%s: a call cut by max_tokens is malformed, the same streamed or whole, and its text is returned', (version, input) => {
    const events = parse(version, input);
    expect(callsOf(events)).toEqual([]);
    expect(malformedOf(events)).toHaveLength(1);
    expect(textOf(events)).toBe(input);
    expect(coalesceText(feed(make(version), input.split('')))).toEqual(events);
  });

  // Regression: the released text began at <｜tool▁call▁begin｜>, dropping the region's opener, and
  // the region's <｜tool▁calls▁end｜> after it was dropped too.
  it.each<Version>(['v3', 'v31'])('%s: releases a broken call exactly as written, its region tokens included', (version) => {
    const good = renderCall(version, { name: 'f', args: { a: 1 }, argsText: '{"a": 1}' });
    const broken = good.replace('{"a": 1}', '{"a": 1 x}');
    // The region's only call breaks: every character is text.
    const alone = `Checking.${CALLS_BEGIN}\n${broken}\n${CALLS_END} Done.`;
    const events = parse(version, alone);
    expect(malformedOf(events)).toHaveLength(1);
    expect(callsOf(events)).toEqual([]);
    expect(textOf(events)).toBe(alone);
    for (let cut = 0; cut <= alone.length; cut++) expect(coalesceText(feed(make(version), [alone.slice(0, cut), alone.slice(cut)]))).toEqual(events);
    // After a finished call the region is one: its tokens and the whitespace between calls stay frame.
    const after = parse(version, `${CALLS_BEGIN}${good}\n${broken}${CALLS_END}`);
    expect(callsOf(after)).toHaveLength(1);
    expect(textOf(after)).toBe(broken);
    // Text where a call should be goes out with the opener, and the region's close.
    expect(textOf(parse(version, `${CALLS_BEGIN} Sorry.${CALLS_END}`))).toBe(`${CALLS_BEGIN} Sorry.${CALLS_END}`);
  });

  // Regression: a <｜tool▁calls▁end｜> with no region open was dropped; vLLM keeps it in content.
  it.each<Version>(['v3', 'v31'])('%s: releases a stray <｜tool▁calls▁end｜> as text, in every split', (version) => {
    const good = renderCall(version, { name: 'f', args: {}, argsText: '{}' });
    for (const input of [`Done.${CALLS_END}`, `${CALLS_BEGIN}${good}${CALLS_END} ok ${CALLS_END}!`, `${CALLS_END}${CALLS_END}`]) {
      const events = parse(version, input);
      for (let cut = 0; cut <= input.length; cut++) expect(coalesceText(feed(make(version), [input.slice(0, cut), input.slice(cut)]))).toEqual(events);
      expect(coalesceText(feed(make(version), input.split('')))).toEqual(events);
    }
    expect(textOf(parse(version, `Done.${CALLS_END}`))).toBe(`Done.${CALLS_END}`);
    expect(textOf(parse(version, `${CALLS_END}${CALLS_END}`))).toBe(`${CALLS_END}${CALLS_END}`);
    // Only the region's own close is frame; a second one is stray.
    expect(textOf(parse(version, `${CALLS_BEGIN}${good}${CALLS_END} ok ${CALLS_END}!`))).toBe(` ok ${CALLS_END}!`);
    // A bare call opens its region: the close after it, with or without text between, is frame.
    expect(textOf(parse(version, `${good}\n${CALLS_END}`))).toBe('');
    expect(textOf(parse(version, `${good} ok${CALLS_END}`))).toBe(' ok');
    // A bare call that breaks opened nothing: its text and the close after it come back as written.
    const broken = good.replace(CALL_END, ` x${CALL_END}`);
    expect(textOf(parse(version, `${broken}${CALLS_END}`))).toBe(`${broken}${CALLS_END}`);
  });

  it.each<Version>(['v3', 'v31'])('%s: takes an opener written twice as frame, in every split, and gives it back with a broken call', (version) => {
    const good = renderCall(version, { name: 'f', args: {}, argsText: '{}' });
    const twice = `${CALLS_BEGIN}\n${CALLS_BEGIN}${good}${CALLS_END}`;
    const events = parse(version, twice);
    expect(callsOf(events)).toHaveLength(1);
    expect(textOf(events)).toBe('');
    for (let cut = 0; cut <= twice.length; cut++) expect(coalesceText(feed(make(version), [twice.slice(0, cut), twice.slice(cut)]))).toEqual(events);
    const broken = twice.replace(CALL_END, ` x${CALL_END}`);
    expect(textOf(parse(version, broken))).toBe(broken);
  });

  it('fails junk before <｜tool▁call▁end｜>', () => {
    const input = `${CALL_BEGIN}f${SEP}{"a": 1} oops${CALL_END}`;
    const events = parse('v31', input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: `expected ${CALL_END} after the arguments` }]);
  });

  it('refuses tools outside the whitelist', () => {
    const events = parse('v31', `${CALL_BEGIN}nope${SEP}{}${CALL_END}`, { tools: ['f'] });
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: 'unknown tool "nope"' }]);
  });

  it('is registered as "deepseek-v3" and "deepseek-v31"', () => {
    const input = `${CALL_BEGIN}f${SEP}{}${CALL_END}`;
    expect(whole(() => createParser('deepseek-v31'), input)).toEqual([start('f'), args('{}'), end({})]);
    expect(callsOf(whole(() => createParser('deepseek-v3'), renderCall('v3', { name: 'f', args: {}, argsText: '{}' })))).toHaveLength(1);
  });
});

const safeProse = prose([CALLS_BEGIN.slice(0, 5), CALL_BEGIN.slice(0, 12), '<｜', '```json', SEP.slice(0, 4), '｜>']);
const region = fc.record({ calls: fc.array(generatedCall, { minLength: 1, maxLength: 3 }), ws: fc.constantFrom('', '\n', ' \n') });

/**
 * The content of `parts`: their prose, less whitespace alone before the first region (frame, as
 * vLLM strips it) and after the last one up to the end (frame too).
 */
const contentOf = (parts: ReadonlyArray<{ prose: string } | { calls: GeneratedCall[] }>) => {
  const first = parts.findIndex((p) => 'calls' in p);
  const last = parts.length - 1 - [...parts].reverse().findIndex((p) => 'calls' in p);
  const proseOf = (from: number, to: number) => parts.slice(from, to).map((p) => ('prose' in p ? p.prose : '')).join('');
  if (first === -1) return proseOf(0, parts.length);
  const lead = proseOf(0, first);
  const tail = proseOf(last + 1, parts.length);
  return (/^[ \n\r\t]*$/.test(lead) ? '' : lead) + proseOf(first, last + 1) + (/^[ \n\r\t]*$/.test(tail) ? '' : tail);
};

describe.each<Version>(['v3', 'v31'])('deepseek parser %s: properties', (version) => {
  const renderRegion = (r: { calls: GeneratedCall[]; ws: string }) => `${CALLS_BEGIN}${r.ws}${r.calls.map((c) => renderCall(version, c)).join(r.ws)}${r.ws}${CALLS_END}`;

  it('recovers every call exactly, and all prose as text', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(safeProse.map((p) => ({ prose: p })), region), { maxLength: 5 }), groupings, (parts, sizes) => {
        const input = parts.map((p) => ('prose' in p ? p.prose : renderRegion(p))).join('');
        for (const events of [whole(make(version), input), feed(make(version), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual(parts.flatMap((p) => ('calls' in p ? p.calls.map((c) => [c.name, c.args, c.argsText]) : [])));
          expect(textOf(events)).toBe(contentOf(parts));
          expect(malformedOf(events)).toEqual([]);
          expectNoHalfCharacters(events, input);
        }
      }),
      { numRuns: 100 },
    );
  });

  const fragment = fc.oneof(
    safeProse,
    region.map(renderRegion),
    fc.record({ r: region, cut: fc.nat() }).map(({ r, cut }) => {
      const full = renderRegion(r);
      return full.slice(0, cut % full.length);
    }),
    fc.constantFrom(CALLS_BEGIN, CALL_BEGIN, CALL_END, SEP, CALLS_END, '```', '{', '😀', '\uD83D', `${CALL_BEGIN}${'n'.repeat(257)}`),
    // V3 arguments without their fence (V3.1's shape, for v31 a broken call).
    fc.constantFrom(`${CALL_BEGIN}function${SEP}f\n{"a": [1, "😀"]}\n${CALL_END}`, `${CALL_BEGIN}function${SEP}f\n\`\`\`json\n{}${CALL_END}`),
  );
  splitInvarianceProperties(make(version), fc.array(fragment, { maxLength: 6 }).map((f) => f.join('')), { runs: 80 });

  it('gives every character of regions whose calls all break back as text, exactly', () => {
    // Junk before <｜tool▁call▁end｜> breaks each call; the released text and what follows it are the input.
    const brokenRegion = region.map((r) => renderRegion(r).replaceAll(CALL_END, ` x${CALL_END}`));
    fc.assert(
      fc.property(fc.array(fc.oneof(safeProse, brokenRegion), { maxLength: 4 }), groupings, (parts, sizes) => {
        const input = parts.join('');
        for (const events of [whole(make(version), input), feed(make(version), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events)).toEqual([]);
          expect(textOf(events)).toBe(input);
        }
      }),
      { numRuns: 80 },
    );
  });
});
