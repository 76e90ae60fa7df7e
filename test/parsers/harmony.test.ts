import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createHarmonyParser, type HarmonyParserOptions } from '../../parsers/formats/harmony-parser.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, feed, field, line, malformedOf, perChar, reasoning, reasoningOf, splitInvarianceProperties, start, text, textOf, whole } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy, groupings, prose, type GeneratedCall } from './json-call-arbitraries.ts';

const make = (options?: HarmonyParserOptions) => () => createHarmonyParser(options);
const parse = (input: string, options?: HarmonyParserOptions) => {
  const events = whole(make(options), input);
  expectWellFormedCalls(events);
  return events;
};

describe('harmony parser', () => {
  it('passes the analysis channel as reasoning and a functions.* recipient as a call', () => {
    const input =
      '<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>';
    expect(parse(input)).toEqual([reasoning('Need the weather tool.'), start('get_weather'), args('{"city":"Paris"'), field(['city'], 'Paris'), args('}'), end({ city: 'Paris' })]);
  });

  it('accepts the recipient before <|channel|>, and passes the final channel as content', () => {
    const input =
      '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"q": "x"}<|call|><|start|>assistant<|channel|>final<|message|>The answer is 4.<|return|>';
    const events = parse(input);
    expect(callsOf(events).map((c) => [c.name, c.argsText])).toEqual([['lookup', '{"q": "x"}']]);
    expect(textOf(events)).toBe('The answer is 4.');
  });

  it('treats commentary without a recipient (a preamble) as content', () => {
    expect(parse('<|channel|>commentary<|message|>Checking two sources.<|end|>')).toEqual([text('Checking two sources.')]);
  });

  it('runs the built-in python recipient as raw code, line by line', () => {
    const events = parse('<|channel|>analysis to=python code<|message|>import math\nprint(math.pi)<|call|>');
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

  it('fails raw python the token limit cut (end(true)), its half line not run; a finished call before it stands', () => {
    const input = '<|channel|>analysis to=python code<|message|>x = 1<|call|><|start|>assistant<|channel|>analysis to=python code<|message|>rows = load()\nlimit = 5';
    for (const deltas of [[input], input.split('')]) {
      const parser = createHarmonyParser();
      const events = coalesceText([...deltas.flatMap((d) => parser.push(d)), ...parser.end(true)]);
      expectWellFormedCalls(events);
      expect(callsOf(events).map((c) => c.args)).toEqual([{ code: 'x = 1' }]);
      expect(events.slice(-2)).toEqual([{ type: 'malformed', callId: 'call_2', reason: 'truncated call' }, text('<|start|>assistant<|channel|>analysis to=python code<|message|>rows = load()\nlimit = 5')]);
    }
  });

  it('fails a truncated call the same streamed or whole, and returns its text', () => {
    const input = '<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": [1, 2';
    const events = parse(input);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated arguments' }]);
    expect(reasoningOf(events)).toBe('Think.');
    expect(textOf(events)).toBe('<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": [1, 2');
    expect(coalesceText(feed(make(), input.split('')))).toEqual(events);
  });

  it('releases a next header the end cut after a call as text, as a whole header never closed is; a cut <|call|> is frame', () => {
    const call = '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a":1}';
    for (const [cutAt, tail] of [
      ['<|sta', '<|sta'],
      ['<|chan', '<|chan'],
      ['<|start|>assi', '<|start|>assi'],
      ['<|ca', ''],
    ] as const) {
      const input = call + cutAt;
      for (const events of [parse(input), perChar(make(), input)]) {
        expect(callsOf(events).map((c) => c.args)).toEqual([{ a: 1 }]);
        expect(textOf(events)).toBe(tail);
      }
    }
  });

  it('takes whitespace after an end token for frame before the next header or the end of the output, and text before text', () => {
    // gpt-oss writes no whitespace between messages; a template or engine that adds a "\n" after
    // <|call|> (or <|end|>) made it content, which reads to a client as an empty-looking answer.
    const call = '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a":1}<|call|>';
    for (const [tail, content] of [
      ['\n', ''],
      ['\n \n', ''],
      ['\n<|start|>assistant<|channel|>final<|message|>Done.<|return|>\n', 'Done.'],
      ['\n<|end|>', ''],
      ['\nDone.', '\nDone.'],
      ['\n<|sta', '\n<|sta'],
    ] as const) {
      const input = call + tail;
      for (const events of [parse(input), perChar(make(), input)]) {
        expect(callsOf(events).map((c) => c.args)).toEqual([{ a: 1 }]);
        expect(textOf(events)).toBe(content);
      }
    }
  });

  it('refuses tools outside the whitelist, and is registered as "harmony"', () => {
    const events = whole(() => createParser('harmony', { tools: ['f'] }), '<|channel|>commentary to=functions.g<|message|>{}<|call|>');
    expect(malformedOf(events)).toEqual([{ type: 'malformed', reason: 'unknown tool "g"' }]);
  });
});

type Message = { analysis: string } | { final: string } | { call: GeneratedCall; before: boolean };
const body = prose(['<|end', '<|', '|>', 'to=functions.x', 'analysis']).filter((b) => !/<\|(start|channel|message|end|call|return)\|>/.test(b));
const message: fc.Arbitrary<Message> = fc.oneof(
  body.map((b) => ({ analysis: b })),
  body.map((b) => ({ final: b })),
  fc.record({ call: generatedCall, before: fc.boolean() }),
);
const render = (ms: Message[]) =>
  ms
    .map((m, i) => {
      const start = i === 0 ? '' : '<|start|>assistant';
      if ('analysis' in m) return `${start}<|channel|>analysis<|message|>${m.analysis}<|end|>`;
      if ('final' in m) return `${start}<|channel|>final<|message|>${m.final}<|return|>`;
      const to = `to=functions.${m.call.name}`;
      return m.before && i > 0 ? `${start} ${to}<|channel|>commentary json<|message|>${m.call.argsText}<|call|>` : `${start}<|channel|>commentary ${to} <|constrain|>json<|message|>${m.call.argsText}<|call|>`;
    })
    .join('');

/** The final messages' text, less whitespace alone before the first call (frame: non-stream content is null there too). */
const contentOf = (ms: Message[]) => {
  const first = ms.findIndex((m) => !('final' in m));
  const cut = first === -1 ? ms.length : first;
  const text = (part: Message[]) => part.map((m) => ('final' in m ? m.final : '')).join('');
  const lead = text(ms.slice(0, cut));
  return (first !== -1 && 'call' in ms[first]! && /^[ \n\r\t]*$/.test(lead) ? '' : lead) + text(ms.slice(cut));
};

describe('harmony parser: properties', () => {
  it('recovers every call, all reasoning and all content exactly', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 5 }), groupings, (ms, sizes) => {
        const input = render(ms);
        for (const events of [whole(make(), input), feed(make(), groupBy(input, sizes))]) {
          expectWellFormedCalls(events);
          expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual(ms.flatMap((m) => ('call' in m ? [[m.call.name, m.call.args, m.call.argsText]] : [])));
          expect(reasoningOf(events)).toBe(ms.map((m) => ('analysis' in m ? m.analysis : '')).join(''));
          expect(textOf(events)).toBe(contentOf(ms));
          expect(malformedOf(events)).toEqual([]);
          expectNoHalfCharacters(events, input);
        }
      }),
      { numRuns: 120 },
    );
  });

  const fragment = fc.oneof(
    fc.array(message, { minLength: 1, maxLength: 3 }).map(render),
    fc.record({ ms: fc.array(message, { minLength: 1, maxLength: 2 }), cut: fc.nat() }).map(({ ms, cut }) => render(ms).slice(0, cut % render(ms).length)),
    body,
    fc.constantFrom('<|start|>', '<|channel|>', '<|message|>', '<|call|>', '<|end|>', ' to=functions.f', '{', '😀', '\uD83D', `<|channel|>${'h'.repeat(510)}`),
  );
  splitInvarianceProperties(make(), fc.array(fragment, { maxLength: 5 }).map((f) => f.join('')), { runs: 100 });
});
