import { describe, expect, it } from 'vitest';
import { createOpenAIToolCallsParser, type OpenAIToolCallsOptions, type ToolCallDelta } from '../../parsers/formats/openai-tool-calls.ts';
import type { ParserEvent } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, malformedOf } from './format-test-kit.ts';

function run(deltas: readonly ToolCallDelta[], options?: OpenAIToolCallsOptions): ParserEvent[] {
  const parser = createOpenAIToolCallsParser(options);
  const events: ParserEvent[] = [];
  for (const delta of deltas) events.push(...parser.pushToolCallDelta(delta));
  events.push(...parser.finish('tool_calls'), ...parser.end());
  expectWellFormedCalls(events);
  return events;
}

// Ollama's OpenAI-compatible stream numbers every parallel call `index: 0` (ollama/ollama#15457),
// and a server that leaves `index` out has it read as 0 (llm-client/chat-chunk-decoder.ts): each
// call still comes with an id of its own, sent only on a call's first fragment.
describe('openai tool-call deltas: a new id at an index already used', () => {
  it('starts a new call, ending the one before, whether the names differ or not', () => {
    const same = run([
      { index: 0, id: 'a1', name: 'file_write', arguments: '{"path": "hello.py"}' },
      { index: 0, id: 'b2', name: 'file_write', arguments: '{"path": "world.py"}' },
    ]);
    expect(malformedOf(same)).toEqual([]);
    expect(callsOf(same).map((c) => [c.name, c.args])).toEqual([
      ['file_write', { path: 'hello.py' }],
      ['file_write', { path: 'world.py' }],
    ]);
    const different = run([
      { index: 0, id: 'a1', name: 'get_weather', arguments: '' },
      { index: 0, arguments: '{"city": "Paris"}' },
      { index: 0, id: 'b2', name: 'get_time', arguments: '' },
      { index: 0, arguments: '{"tz": "CET"}' },
    ]);
    expect(malformedOf(different)).toEqual([]);
    expect(callsOf(different).map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'CET' }],
    ]);
  });

  it('keeps the upstream ids apart with upstreamIds, and a repeated id is still the same call', () => {
    const events = run([{ index: 0, id: 'a1', name: 'f', arguments: '{"x":' }, { index: 0, id: 'a1', arguments: '1}' }, { index: 0, id: 'b2', name: 'g', arguments: '{}' }], { upstreamIds: true });
    expect(callsOf(events).map((c) => [c.callId, c.name, c.args])).toEqual([
      ['a1', 'f', { x: 1 }],
      ['b2', 'g', {}],
    ]);
  });

  it('keeps one call for a server whose id changes on every fragment (only a name with a new id starts a call)', () => {
    // mlx-openai-server before its #216 sent a fresh id with each fragment of the same call.
    const events = run([{ index: 0, id: 'a1', name: 'f', arguments: '{"x": ' }, { index: 0, id: 'a2', arguments: '1, "y": "' }, { index: 0, id: 'a3', arguments: 'z"}' }]);
    expect(malformedOf(events)).toEqual([]);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['f', { x: 1, y: 'z' }]]);
    // Repeating the name too, from a first fragment without arguments.
    const repeated = run([{ index: 0, id: 'a1', name: 'f' }, { index: 0, id: 'a2', name: 'f', arguments: '{"x": ' }, { index: 0, id: 'a3', name: 'f', arguments: '1}' }]);
    expect(malformedOf(repeated)).toEqual([]);
    expect(callsOf(repeated).map((c) => [c.name, c.args])).toEqual([['f', { x: 1 }]]);
  });

  it('takes an empty id for none (servers that send id "" on every fragment after the first)', () => {
    const events = run([{ index: 0, id: 'a1', name: 'f', arguments: '' }, { index: 0, id: '', arguments: '{"x": 1}' }, { index: 0, id: 'b2', name: 'g', arguments: '' }, { index: 0, id: '', arguments: '{}' }]);
    expect(malformedOf(events)).toEqual([]);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([
      ['f', { x: 1 }],
      ['g', {}],
    ]);
  });

  it('starts the new call after one that was broken, rather than report a fragment for an ended call', () => {
    const events = run([{ index: 0, id: 'a1', name: 'f', arguments: '{} x' }, { index: 0, id: 'b2', name: 'g', arguments: '{"y": 2}' }]);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: 'text after the arguments object' }]);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([['g', { y: 2 }]]);
  });

  it('starts a new call at a different name once the arguments have closed, with no ids at all', () => {
    // A server that sends neither ids nor distinct indexes (index read as 0) still names each
    // call: a name after a whole arguments object is the next call's, not the first's in pieces.
    const events = run([
      { index: 0, name: 'get_weather', arguments: '{"city": ' },
      { index: 0, arguments: '"Paris"}' },
      { index: 0, name: 'get_time', arguments: '{"tz": "CET"}' },
    ]);
    expect(malformedOf(events)).toEqual([]);
    expect(callsOf(events).map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'CET' }],
    ]);
    // Before the arguments close, another name is still the first one's, in pieces: refused.
    const pieces = run([{ index: 0, name: 'get_' }, { index: 0, name: 'weather', arguments: '{}' }]);
    expect(malformedOf(pieces).map((e) => e.reason)).toEqual([`tool call 0's name came in pieces ("get_", then "weather"): it must arrive whole`]);
    // The same name again is the same call (servers repeat it on every fragment).
    const repeated = run([{ index: 0, name: 'f', arguments: '{"x": 1}' }, { index: 0, name: 'f', arguments: '' }]);
    expect(callsOf(repeated).map((c) => [c.name, c.args])).toEqual([['f', { x: 1 }]]);
  });
});
