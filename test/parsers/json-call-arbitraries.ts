import fc from 'fast-check';
import { expect } from 'vitest';
import type { ParserEvent } from '../../parsers/parser-events.ts';
import { referenceJsonParse } from '../support/reference-json.ts';

/** Strings that stress the scanner: escapes, unicode (astral included), quotes, backslashes, newlines. */
export const trickyString = fc.oneof(
  fc.constantFrom('', 'Paris', 'Lyon, France', 'é', '😀', '👋🏽', '你好', 'a"b', 'back\\slash', 'line1\nline2\n', '\u2028', '\t', '}', ']', '{"x":1}', '</tool_call>', '[TOOL_CALLS]', '>>>', '<|call|>'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
);

const key = fc.oneof(fc.constantFrom('city', 'q', 'code', 'name', 'arguments', 'é', '😀', '', '__proto__', 'a b'), fc.string({ maxLength: 6 }));

/** JSON values with every kind of leaf, nested a little. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    trickyString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(true, false, null, 0, -0.5, 1e21, 12345678901234567890),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value;

export const argsObject = fc.dictionary(key, jsonValue, { maxKeys: 4 }) as fc.Arbitrary<Record<string, unknown>>;

export type JsonStyle = { indent: 0 | 1 | 2; asciiOnly: boolean; spaced: boolean };
export const jsonStyle: fc.Arbitrary<JsonStyle> = fc.record({ indent: fc.constantFrom(0, 1, 2), asciiOnly: fc.boolean(), spaced: fc.boolean() });

/**
 * JSON text of `value` in one of the styles models write: compact, ", "/": " spaced (Python's
 * json.dumps), indented; unicode raw or as \uXXXX escapes (astral characters as surrogate pairs).
 */
export function toJson(value: unknown, style: JsonStyle): string {
  let text = style.indent > 0 ? JSON.stringify(value, null, style.indent) : style.spaced ? pythonDumps(value) : JSON.stringify(value);
  if (style.asciiOnly) text = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text;
}

function pythonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonDumps(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** A tool name as models write them. */
export const toolName = fc.constantFrom('get_weather', 'search', 'python', 'add', 'get-time', 'ns.tool', 'f');

export interface GeneratedCall {
  name: string;
  args: Record<string, unknown>;
  /** The arguments exactly as written in the output. */
  argsText: string;
}

export const generatedCall: fc.Arbitrary<GeneratedCall> = fc
  .record({ name: toolName, args: argsObject, style: jsonStyle })
  .map(({ name, args, style }) => ({ name, args: referenceJsonParse(JSON.stringify(args)) as Record<string, unknown>, argsText: toJson(args, style) }));

/** Prose around calls: unicode, braces, near-miss markers. */
export function prose(nearMisses: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('Sure, checking now.', 'Here you go:\n', ' ', '\n\n', 'é😀 ', '你好', 'Done.', 'x = {1}', '<', '[', '>', '|') },
    { weight: 2, arbitrary: fc.constantFrom(...nearMisses) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
}

/**
 * No text, reasoning or argument fragment ends between the halves of a surrogate pair (the
 * kit checks text and reasoning for lone halves; argument fragments reach clients too).
 */
export function expectNoHalfCharacters(events: readonly ParserEvent[], input: string): void {
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(input)) return;
  for (const e of events) {
    if (e.type !== 'text' && e.type !== 'reasoning' && e.type !== 'call-args') continue;
    const first = e.text.charCodeAt(0);
    const last = e.text.charCodeAt(e.text.length - 1);
    expect(first >= 0xdc00 && first <= 0xdfff).toBe(false);
    expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
  }
}

/** Cuts `text` into consecutive groups of the given sizes (cycled). */
export function groupBy(text: string, sizes: readonly number[]): string[] {
  const out: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const size = sizes[i % sizes.length]!;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

export const groupings = fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 });
