import { describe, expect, it } from 'vitest';
import { redumpJson } from '../../parsers/formats/redump-json.ts';
import { createParser } from '../../parsers/index.ts';
import type { ParserEvent } from '../../parsers/parser-events.ts';
import { callsOf, expectWellFormedCalls, malformedOf, perChar, whole } from './format-test-kit.ts';

// Regression: an integer past 1.8e308 (here 400 digits) became Infinity in a call's args, which
// JSON.stringify writes as null (the turn replayed to the model read `"n":null`); pythonic
// refused the call ("out of range") and qwen3-coder sent a number parameter, or a whole object
// holding one, as a string. Python's ints have no limit: vLLM's json.dumps writes every digit,
// and so does call-args now; args hold the digits as a string, never Infinity.
const BIG = `1${'234567890'.repeat(44)}1`;
const HEX = `0x${'f'.repeat(300)}`;
const HEX_DIGITS = BigInt(HEX).toString();

const tool = (name: string, properties: Record<string, unknown>) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties } } });
const qwen3 = (params: Record<string, string>) =>
  `<tool_call>\n<function=f>\n${Object.entries(params)
    .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
    .join('')}</function>\n</tool_call>`;

/** The one finished call, checked the same streamed as whole, with args free of Infinity and NaN. */
const onlyCall = (events: ParserEvent[], streamed: ParserEvent[]) => {
  expectWellFormedCalls(events);
  expect(streamed).toEqual(events);
  const [call, ...rest] = callsOf(events);
  expect(rest).toEqual([]);
  expect(JSON.stringify(call!.args)).not.toMatch(/null|Infinity|NaN/);
  for (const e of events) if (e.type === 'call-piece' && e.piece.kind === 'field') expect(Number.isFinite(e.piece.value)).toBe(typeof e.piece.value === 'number');
  return call!;
};

describe('integers too large for a double keep every digit', () => {
  it('qwen3-coder: integer and number parameters, and ints inside object and array parameters', () => {
    const toolDefinitions = [tool('f', { i: { type: 'integer' }, n: { type: 'number' }, neg: { type: 'integer' }, o: { type: 'object' }, l: { type: 'array' } })];
    const input = qwen3({ i: BIG, n: BIG, neg: `-${BIG}`, o: `{"id": ${BIG}, "x": 1.5}`, l: `[${BIG}, 'a', True]` });
    const make = () => createParser('qwen3-coder', { toolDefinitions });
    const call = onlyCall(whole(make, input), perChar(make, input));
    expect(call.argsText).toBe(`{"i":${BIG},"n":${BIG},"neg":-${BIG},"o":{"id":${BIG},"x":1.5},"l":[${BIG},"a",true]}`);
    expect(call.args).toEqual({ i: BIG, n: BIG, neg: `-${BIG}`, o: { id: BIG, x: 1.5 }, l: [BIG, 'a', true] });
  });

  it('qwen3-coder: a float past 1.8e308 stays text, as vLLM keeps it (Python reads inf, which is no JSON)', () => {
    const toolDefinitions = [tool('f', { n: { type: 'number' }, o: { type: 'object' } })];
    const input = qwen3({ n: '1e400', o: '{"x": 1e400}' });
    const make = () => createParser('qwen3-coder', { toolDefinitions });
    const call = onlyCall(whole(make, input), perChar(make, input));
    expect(call.argsText).toBe('{"n":"1e400","o":"{\\"x\\": 1e400}"}');
  });

  it('pythonic: decimal, negative and hexadecimal ints, as keyword values, in containers and as dict keys', () => {
    const input = `[f(a=${BIG}, b=-${BIG}, h=${HEX}, c={'k': [${BIG}], ${BIG}: 1}, t=(${BIG},))]`;
    const make = () => createParser('pythonic');
    const call = onlyCall(whole(make, input), perChar(make, input));
    expect(call.argsText).toBe(`{"a":${BIG},"b":-${BIG},"h":${HEX_DIGITS},"c":{"k":[${BIG}],"${BIG}":1},"t":[${BIG}]}`);
    expect(call.args).toEqual({ a: BIG, b: `-${BIG}`, h: HEX_DIGITS, c: { k: [BIG], [BIG]: 1 }, t: [BIG] });
  });

  it('pythonic: a float past 1.8e308 still makes the call malformed (Python reads inf; json.dumps writes Infinity, no JSON)', () => {
    const events = whole(() => createParser('pythonic'), `[f(a=${BIG}.0)]`);
    expect(malformedOf(events)).toEqual([{ type: 'malformed', callId: 'call_1', reason: expect.stringContaining('out of range') }]);
  });

  it('llmcompiler-plan: a step literal', () => {
    const input = `1. fetch(${BIG})\n2. join()\n`;
    const make = () => createParser('llmcompiler-plan');
    const call = onlyCall(whole(make, input), perChar(make, input));
    expect(call.argsText).toContain(`"args":[${BIG}]`);
    expect((call.args as { steps: Array<{ args: unknown[] }> }).steps[0]!.args).toEqual([BIG]);
  });

  // The JSON formats forward the model's text, which JSON.parse read as Infinity in args.
  it.each([
    ['hermes', (a: string) => `<tool_call>{"name": "f", "arguments": ${a}}</tool_call>`],
    ['mistral', (a: string) => `[TOOL_CALLS]f[ARGS]${a}`],
    ['llama3-json', (a: string) => `{"name": "f", "parameters": ${a}}`],
  ] as const)('%s: the arguments text as written, its big numbers as their literals in args and field pieces', (format, wrap) => {
    const argsText = `{"n": ${BIG}, "m": -${BIG}, "x": 1E400, "l": [${BIG}], "ok": 1.5}`;
    const make = () => createParser(format);
    const events = whole(make, wrap(argsText));
    const call = onlyCall(events, perChar(make, wrap(argsText)));
    expect(call.argsText).toBe(argsText);
    expect(call.args).toEqual({ n: BIG, m: `-${BIG}`, x: '1E400', l: [BIG], ok: 1.5 });
    expect(events).toContainEqual({ type: 'call-piece', callId: 'call_1', piece: { kind: 'field', path: ['n'], value: BIG } });
  });

  it('redumpJson: an int of any size keeps its digits; a float past 1.8e308 is still refused', () => {
    expect(redumpJson(`[${BIG}, -${BIG}]`)).toEqual({ value: [BIG, `-${BIG}`], json: `[${BIG},-${BIG}]` });
    expect(redumpJson(`[${BIG}.0]`)).toBeUndefined();
  });
});
