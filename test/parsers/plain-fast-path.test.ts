import { describe, expect, it } from 'vitest';
import { createOpenAIToolCallsParser, createParser, withReasoning, type ParserEvent, type ToolCallParser } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { withCodeFences } from '../../parsers/with-code-fences.ts';
import { feed, feedPush, group, whole } from './format-test-kit.ts';

// The per-token fast path (FormatParser's plain lane → IncrementalJsonScanner.writePlain) takes a
// delta only if all of it stays inside a string, and undoes its decoding when a later character
// of the delta needs the state machine. These deltas sit right on those edges: each split must
// give exactly the events of the whole text.
const CODE = 'print(\\"a\\")\\nx = \\"\\\\\\"\\n\\u00e9\\ud83d\\ude00\\t\\/ ok\\n';
const ARGS = `{"code": "${CODE}", "n": 1}`;

const FORMATS: Array<[string, () => ToolCallParser, string]> = [
  ['hermes', () => createParser('hermes'), `<tool_call>{"name": "python", "arguments": ${ARGS}}</tool_call> after`],
  ['mistral v0.3', () => createParser('mistral'), `[TOOL_CALLS] [{"name": "python", "arguments": ${ARGS}}] after`],
  ['mistral v11', () => createParser('mistral'), `[TOOL_CALLS]python[ARGS]${ARGS}`],
  ['llama3-json', () => createParser('llama3-json'), `<|python_tag|>{"name": "python", "parameters": ${ARGS}}`],
  ['deepseek-v31', () => createParser('deepseek-v31'), `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>python<｜tool▁sep｜>${ARGS}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`],
  ['harmony', () => createParser('harmony'), `<|start|>assistant<|channel|>commentary to=functions.python <|constrain|>json<|message|>${ARGS}<|call|>`],
  ['functionary-v3', () => createParser('functionary-v3'), `python\n${ARGS}`],
];

/** Deltas that end on, start after, or straddle a backslash, and that mix escapes with a closing quote. */
function edgeSplits(text: string): string[][] {
  const splits: string[][] = [];
  for (const sizes of [[1], [2], [3], [1, 2], [2, 1, 3], [4, 1], [5, 2, 1]]) splits.push(group(text, sizes));
  // Each backslash alone, and each backslash together with the next two characters.
  const alone: string[] = [];
  const withNext: string[] = [];
  let plain = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      if (plain) alone.push(plain);
      alone.push('\\');
      plain = '';
    } else {
      plain += text[i];
    }
  }
  if (plain) alone.push(plain);
  for (let at = 0; at < text.length; ) {
    const next = text.indexOf('\\', at);
    if (next === -1) {
      withNext.push(text.slice(at));
      break;
    }
    if (next > at) withNext.push(text.slice(at, next));
    withNext.push(text.slice(next, next + 3));
    at = next + 3;
  }
  splits.push(alone, withNext);
  return splits;
}

describe('the plain-text fast path inside JSON strings', () => {
  for (const [name, make, text] of FORMATS) {
    it(`${name}: every edge split gives the whole text's events`, () => {
      const expected = whole(make, text);
      expect(expected.filter((e) => e.type === 'malformed')).toEqual([]);
      expect(expected.some((e) => e.type === 'call-end')).toBe(true);
      for (const deltas of edgeSplits(text)) expect(coalesceText(feed(make, deltas)), JSON.stringify(deltas)).toEqual(expected);
    });
  }

  // The gateway drives parsers through pushFast; push must stay its exact equivalent, event for
  // event (not only once coalesced), alone and inside the wrappers the gateway puts around it.
  for (const [name, make, text] of FORMATS) {
    const wrapped: Array<[string, () => ToolCallParser, string]> = [
      [name, make, text],
      [`${name} + reasoning`, () => withReasoning(make()), `<think>plan <tool_call> a call</think>${text}`],
      [`${name} + code fences`, () => withCodeFences(make(), { languages: ['python'], bareFence: false, toolName: 'python', callIdPrefix: 'py' }), `${text}\nThen:\n\`\`\`python\nprint(1)\n\`\`\`\n`],
    ];
    for (const [label, build, input] of wrapped) {
      it(`${label}: pushFast answers exactly what push does, on every edge split`, () => {
        expect(build().pushFast).toBeTypeOf('function');
        let fast = 0;
        for (const deltas of [...edgeSplits(input), group(input, [7, 3])]) {
          const parser = build();
          for (const d of deltas) if (typeof parser.pushFast!(d) === 'string') fast += 1;
          expect(feed(build, deltas), JSON.stringify(deltas)).toEqual(feedPush(build, deltas));
        }
        // The splits do reach the allocation-free answer.
        expect(fast).toBeGreaterThan(0);
      });
    }
  }

  it('never puts half a character in an event, whatever the split', () => {
    const text = `<tool_call>{"name": "python", "arguments": {"code": "a😀b😀\\n😀"}}</tool_call>`;
    for (const deltas of [text.split(''), group(text, [2]), group(text, [3, 1])]) {
      const events = feed(() => createParser('hermes'), deltas);
      for (const e of events) {
        if (e.type !== 'call-args' && e.type !== 'text') continue;
        expect(/[\ud800-\udbff]$/.test(e.text), JSON.stringify(e)).toBe(false);
        expect(/^[\udc00-\udfff]/.test(e.text), JSON.stringify(e)).toBe(false);
      }
    }
  });

  it('openai-tool-calls: argument fragments on the same edges give the same events', () => {
    const run = (fragments: readonly string[]): ParserEvent[] => {
      const parser = createOpenAIToolCallsParser();
      const events: ParserEvent[] = [...parser.pushToolCallDelta({ index: 0, id: 'up-1', name: 'python', arguments: '' })];
      for (const fragment of fragments) events.push(...parser.pushToolCallDelta({ index: 0, arguments: fragment }));
      events.push(...parser.finish('tool_calls'), ...parser.end());
      return coalesceText(events);
    };
    const expected = run([ARGS]);
    expect(expected.some((e) => e.type === 'call-end')).toBe(true);
    for (const fragments of edgeSplits(ARGS)) expect(run(fragments), JSON.stringify(fragments)).toEqual(expected);
  });
});
