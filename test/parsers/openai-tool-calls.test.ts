import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOpenAIToolCallsParser, type OpenAIToolCallsOptions, type ToolCallDelta } from '../../parsers/formats/openai-tool-calls.ts';
import { createParser } from '../../parsers/index.ts';
import { coalesceText, type ParserEvent } from '../../parsers/parser-events.ts';
import { args, callsOf, end, expectWellFormedCalls, field, line, malformedOf, start, text, textOf } from './format-test-kit.ts';
import { expectNoHalfCharacters, generatedCall, groupBy } from './json-call-arbitraries.ts';

type Step = { content: string } | ToolCallDelta | { finish: string };

function run(steps: readonly Step[], options?: OpenAIToolCallsOptions): ParserEvent[] {
  const parser = createOpenAIToolCallsParser(options);
  const events: ParserEvent[] = [];
  for (const step of steps) {
    if ('content' in step) events.push(...parser.push(step.content));
    else if ('finish' in step) events.push(...parser.finish(step.finish));
    else events.push(...parser.pushToolCallDelta(step));
  }
  events.push(...parser.end());
  expectWellFormedCalls(events);
  return events;
}

describe('openai tool-call deltas', () => {
  it('emits the same events as the text formats, ending a call when the next index starts', () => {
    const events = run([
      { content: 'Checking.' },
      { index: 0, id: 'call_abc', name: 'get_weather', arguments: '' },
      { index: 0, arguments: '{"city": "Pa' },
      { index: 0, arguments: 'ris", "days": 2}' },
      { index: 1, id: 'call_def', name: 'get_time', arguments: '{}' },
      { finish: 'tool_calls' },
    ]);
    expect(coalesceText(events)).toEqual([
      text('Checking.'),
      start('get_weather'),
      args('{"city": "Paris"'),
      field(['city'], 'Paris'),
      args(', "days": 2'),
      field(['days'], 2),
      args('}'),
      end({ city: 'Paris', days: 2 }),
      start('get_time', 'call_2'),
      args('{}', 'call_2'),
      end({}, 'call_2'),
    ]);
  });

  it('does not end a call because its arguments parse: only the next index, finish or end() do', () => {
    const parser = createOpenAIToolCallsParser();
    parser.pushToolCallDelta({ index: 0, name: 'search' });
    expect(parser.pushToolCallDelta({ index: 0, arguments: '{"q": "test"}' }).some((e) => e.type === 'call-end')).toBe(false);
    expect(parser.pushToolCallDelta({ index: 0, arguments: '  ' }).some((e) => e.type === 'call-end')).toBe(false);
    expect(parser.finish('tool_calls')).toEqual([end({ q: 'test' })]);
  });

  it('streams python code inside the arguments as lines', () => {
    const events = run([
      { index: 0, name: 'python' },
      { index: 0, arguments: '{"code": "import os\\n' },
      { index: 0, arguments: 'print(1)"}' },
    ]);
    expect(events.filter((e) => e.type === 'call-piece')).toEqual([line('import os\n', 1), line('print(1)', 2), field(['code'], 'import os\nprint(1)')]);
  });

  it('reports arguments cut by max_tokens as malformed', () => {
    const events = run([{ index: 0, name: 'f', arguments: '{"a": [1, ' }, { finish: 'length' }]);
    expect(callsOf(events)).toEqual([]);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated arguments' }]);
  });

  it('ends a stream the token limit cut with an open call malformed when its arguments had not begun or not closed', () => {
    const cut = (fragment: string) => {
      const parser = createOpenAIToolCallsParser();
      const events = [...parser.pushToolCallDelta({ index: 0, name: 'done', arguments: '{}' }), ...parser.pushToolCallDelta({ index: 1, name: 'f', arguments: fragment }), ...parser.endCut()];
      expect(parser.end()).toEqual([]);
      return { calls: callsOf(events).map((c) => c.name), malformed: malformedOf(events).map((e) => e.reason) };
    };
    expect(cut('')).toEqual({ calls: ['done'], malformed: ['truncated: the token limit cut the call before its arguments'] });
    expect(cut('{"a": ')).toEqual({ calls: ['done'], malformed: ['truncated arguments'] });
    expect(cut('{"a": 1}')).toEqual({ calls: ['done', 'f'], malformed: [] });
  });

  it('reads finish("length") as the token limit, as endCut does: a call cut after its name does not run with {}', () => {
    const cut = run([{ index: 0, name: 'f', arguments: '' }, { finish: 'length' }]);
    expect(callsOf(cut)).toEqual([]);
    expect(malformedOf(cut)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'truncated: the token limit cut the call before its arguments' }]);
    // Any other reason ends it with {}, as OpenAI's empty arguments mean.
    expect(callsOf(run([{ index: 0, name: 'f', arguments: '' }, { finish: 'tool_calls' }])).map((c) => c.args)).toEqual([{}]);
  });

  it('queues arguments that arrive before the name, and reads empty arguments as {}', () => {
    const events = run([{ index: 0, arguments: '{"x": 1}' }, { index: 0, name: 'f' }, { index: 1, name: 'g', arguments: '' }]);
    expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([
      ['f', { x: 1 }, '{"x": 1}'],
      ['g', {}, ''],
    ]);
  });

  it('reads whitespace-only arguments as {}, with call-args that still parse to it', () => {
    // The whitespace goes out as call-args (it may precede the object); alone it does not parse.
    const events = run([{ index: 0, name: 'f', arguments: ' ' }, { index: 0, arguments: '\n' }, { index: 1, name: 'g', arguments: '\t' }, { finish: 'tool_calls' }]);
    expect(callsOf(events).map((c) => [c.name, c.args, c.argsText])).toEqual([
      ['f', {}, ' \n{}'],
      ['g', {}, '\t{}'],
    ]);
    for (const call of callsOf(events)) expect(JSON.parse(call.argsText)).toEqual(call.args);
  });

  it('fails junk after the object, fragments for an ended call, nameless calls and unknown tools', () => {
    expect(malformedOf(run([{ index: 0, name: 'f', arguments: '{} x' }]))).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'text after the arguments object' }]);
    expect(malformedOf(run([{ index: 0, name: 'f', arguments: '{}' }, { index: 1, name: 'g', arguments: '{}' }, { index: 0, arguments: ' ' }]))).toEqual([
      { type: 'malformed', reason: 'fragment for tool call 0, which has ended' },
    ]);
    expect(malformedOf(run([{ index: 0, arguments: '{}' }]))).toEqual([{ type: 'malformed', reason: 'tool call without a name' }]);
    expect(malformedOf(run([{ index: 0, name: 'rm', arguments: '{}' }], { tools: ['f'] }))).toEqual([{ type: 'malformed', reason: 'unknown tool "rm"' }]);
  });


  it('reports a refused or broken call once, however many fragments of it follow', () => {
    // The upstream streams the rest of a call the gateway already refused: those fragments are
    // the same call's, not fragments for an ended one (the second and later ones were reported so).
    const refused = run(
      [{ index: 0, name: 'rm', arguments: '' }, { index: 0, arguments: '{"a' }, { index: 0, arguments: '": 1' }, { index: 0, arguments: '}' }, { index: 1, name: 'f', arguments: '{}' }],
      { tools: ['f'] },
    );
    expect(malformedOf(refused)).toEqual([{ type: 'malformed', reason: 'unknown tool "rm"' }]);
    expect(callsOf(refused).map((c) => c.name)).toEqual(['f']);
    const broken = run([{ index: 0, name: 'f', arguments: '{} x' }, { index: 0, arguments: 'y' }, { index: 0, arguments: 'z' }, { finish: 'tool_calls' }]);
    expect(malformedOf(broken)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'text after the arguments object' }]);
  });
  it('refuses a name that comes in pieces rather than run the tool its first piece names; the same name again is fine', () => {
    const split = run([{ index: 0, name: 'get_' }, { index: 0, name: 'weather', arguments: '{}' }]);
    expect(malformedOf(split)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'tool call 0\'s name came in pieces ("get_", then "weather"): it must arrive whole' }]);
    expect(split.some((e) => e.type === 'call-end')).toBe(false);
    const repeated = run([{ index: 0, name: 'f', arguments: '{"a":' }, { index: 0, name: 'f', arguments: '1}' }]);
    expect(malformedOf(repeated)).toEqual([]);
    expect(callsOf(repeated).map((c) => c.args)).toEqual([{ a: 1 }]);
  });

  it('can keep the upstream ids, and is registered as "openai-tool-calls"', () => {
    expect(run([{ index: 0, id: 'call_up', name: 'f', arguments: '{}' }], { upstreamIds: true })[0]).toEqual(start('f', 'call_up'));
    // An id the upstream gave twice names the second call with one of the gateway's.
    const twice = run([{ index: 0, id: 'call_up', name: 'f', arguments: '{}' }, { index: 1, id: 'call_up', name: 'g', arguments: '{}' }], { upstreamIds: true });
    expect(twice.filter((e) => e.type === 'call-start')).toEqual([start('f', 'call_up'), start('g', 'call_1')]);
    const parser = createParser('openai-tool-calls') as ReturnType<typeof createOpenAIToolCallsParser>;
    expect(parser.pushToolCallDelta({ index: 0, name: 'f' })).toEqual([start('f')]);
  });
});

describe('openai tool-call deltas: properties', () => {
  const stream = fc.record({
    content: fc.string({ unit: 'grapheme', maxLength: 10 }),
    calls: fc.array(fc.record({ call: generatedCall, sizes: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 8 }), ws: fc.constantFrom('', ' ', '\n') }), { maxLength: 4 }),
    contentSizes: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
  });

  it('any fragmentation of content and arguments gives the events of the whole fragments', () => {
    fc.assert(
      fc.property(stream, ({ content, calls, contentSizes }) => {
        const wholeSteps: Step[] = [{ content }, ...calls.map(({ call, ws }, index) => ({ index, name: call.name, arguments: ws + call.argsText + ws }))];
        const split: Step[] = [
          ...groupBy(content, contentSizes).map((c) => ({ content: c })),
          ...calls.flatMap(({ call, sizes, ws }, index) => [
            { index, id: `up_${index}`, name: call.name },
            ...groupBy(ws + call.argsText + ws, sizes).map((a) => ({ index, arguments: a })),
          ]),
          { finish: 'tool_calls' },
        ];
        const expected = coalesceText(run(wholeSteps));
        const events = run(split);
        expect(coalesceText(events)).toEqual(expected);
        expect(callsOf(events).map((c) => [c.name, c.args])).toEqual(calls.map(({ call }) => [call.name, call.args]));
        expect(textOf(events)).toBe(content);
        expectNoHalfCharacters(events, content + calls.map((c) => c.call.argsText).join(''));
      }),
      { numRuns: 150 },
    );
  });
});
