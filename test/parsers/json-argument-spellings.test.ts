import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParser, type ParserFormat } from '../../parsers/index.ts';
import { coalesceText } from '../../parsers/parser-events.ts';
import { argsOfText, callsOf, expectWellFormedCalls, feed, feedPush, group, malformedOf, perChar, whole } from './format-test-kit.ts';
import { argsObject } from './json-call-arbitraries.ts';

// The generated calls of the per-format suites are JSON.stringify's or json.dumps' text: one
// spelling of each number and one of whitespace. A model writes any JSON: `1E+2`, `-0.0`,
// `5e-1`, tabs, CRLF and blank lines between tokens (as an indented dump on Windows does), all
// of which the scanner must read the same whole or cut anywhere, keeping the text as written.
// (Reading `E` after a fraction, or `\r` as whitespace, was not pinned by any property before.)
const space = fc.array(fc.constantFrom(' ', '\t', '\n', '\r\n', '\r'), { maxLength: 3 }).map((s) => s.join(''));

/** Other spellings of a number JSON.parse reads as the same double. */
function numberSpellings(value: number): string[] {
  const plain = Object.is(value, -0) ? '-0' : String(value);
  // toExponential drops the sign of -0.
  const exp = Object.is(value, -0) ? '-0e+0' : value.toExponential();
  const spellings = [plain, exp, exp.toUpperCase(), exp.replace('e+', 'e'), exp.replace(/e([+-])/, 'E$10')];
  // An integer with a fraction and an exponent of zero: 12 as 12.0, 12.00e+0.
  if (Number.isInteger(value) && !plain.includes('e')) spellings.push(`${plain}.0`, `${plain}.00e+0`, `${plain}E-0`);
  return spellings.filter((s) => /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(s));
}

/** JSON text of `value`, `pick` choosing each number's spelling and the whitespace between tokens. */
function spell(value: unknown, pick: () => number, ws: () => string): string {
  if (typeof value === 'number') {
    const spellings = numberSpellings(value);
    return spellings[pick() % spellings.length]!;
  }
  if (Array.isArray(value)) return value.length === 0 ? `[${ws()}]` : `[${value.map((v) => `${ws()}${spell(v, pick, ws)}${ws()}`).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return `{${ws()}}`;
    return `{${entries.map(([k, v]) => `${ws()}${JSON.stringify(k)}${ws()}:${ws()}${spell(v, pick, ws)}${ws()}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const spelledArgs = fc
  .record({ args: argsObject, picks: fc.array(fc.nat(), { minLength: 1, maxLength: 16 }), spaces: fc.array(space, { minLength: 1, maxLength: 16 }), extra: fc.constantFrom(0, -0, 100, 0.5, 1e-7, 1e21, -12.5) })
  .map(({ args, picks, spaces, extra }) => {
    let p = 0;
    let s = 0;
    const value = { ...args, n: extra };
    return spell(value, () => picks[p++ % picks.length]!, () => spaces[s++ % spaces.length]!);
  });

// FUZZ_RUNS=5000 for a longer hunt.
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

// Each format's frame around one call, with whitespace where its call object allows it.
const FRAMES: Array<[ParserFormat, (args: string, ws: string) => string]> = [
  ['hermes', (a, ws) => `<tool_call>${ws}{${ws}"name"${ws}:${ws}"f"${ws},${ws}"arguments"${ws}:${ws}${a}${ws}}${ws}</tool_call>`],
  ['mistral', (a, ws) => `[TOOL_CALLS]${ws}[${ws}{${ws}"name"${ws}:${ws}"f"${ws},${ws}"arguments"${ws}:${ws}${a}${ws}}${ws}]`],
  ['mistral', (a) => `[TOOL_CALLS]f[ARGS]${a}`],
  ['llama3-json', (a, ws) => `{${ws}"name"${ws}:${ws}"f"${ws},${ws}"parameters"${ws}:${ws}${a}${ws}}`],
  ['functionary-v3', (a) => `f\n${a}`],
  ['deepseek-v31', (a) => `<｜tool▁call▁begin｜>f<｜tool▁sep｜>${a}<｜tool▁call▁end｜>`],
  ['deepseek-v3', (a) => `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n\`\`\`json\n${a}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`],
  ['harmony', (a) => `<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>${a}<|call|>`],
];

describe('JSON formats read arguments in any spelling JSON allows, however split', () => {
  it.each(FRAMES.map(([format, frame], i) => [`${format} #${i}`, format, frame] as const))('%s', (_, format, frame) => {
    const make = () => createParser(format);
    fc.assert(
      fc.property(spelledArgs, space, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 }), (argsText, ws, sizes) => {
        const input = frame(argsText, ws);
        const events = whole(make, input);
        expectWellFormedCalls(events);
        expect(malformedOf(events)).toEqual([]);
        const calls = callsOf(events);
        expect(calls.map((c) => c.name)).toEqual(['f']);
        // Exactly as written (whitespace around the object is frame), and what it means.
        expect(calls[0]!.argsText).toBe(argsText);
        expect(calls[0]!.args).toEqual(argsOfText(argsText));
        expect(perChar(make, input)).toEqual(events);
        expect(coalesceText(feed(make, group(input, sizes)))).toEqual(events);
        expect(coalesceText(feedPush(make, group(input, sizes)))).toEqual(events);
      }),
      { numRuns: RUNS },
    );
  });
});
