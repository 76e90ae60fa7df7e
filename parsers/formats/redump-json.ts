import { jsonNumberValue } from '../json/json-number-value.ts';
import { pythonFloatJson, pythonIntJson } from './python-number-json.ts';
import { setOwn } from './python-value-parser.ts';

interface Reader {
  text: string;
  at: number;
}

interface Parsed {
  value: unknown;
  json: string;
}

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Deeper arrays and objects are not read (undefined, as text that is no JSON): the reader
 * recurses, and 20,000 levels overflowed the stack and failed the request. The JSON formats'
 * scanner stops at the same depth (json-value-assembler.ts).
 */
const MAX_NESTING = 256;

/**
 * A JSON text as JSON.parse reads it, and the compact JSON that Python's
 * `json.dumps(json.loads(text))` writes for it: what vLLM sends for an object or array
 * parameter it decoded. The difference from `JSON.stringify(JSON.parse(text))` is what a client
 * can see: every digit of an int past 2^53 (Python ints are exact; a double rounds an id),
 * floats in Python's repr (`1.0` stays `1.0`), and keys in the order written (a JavaScript
 * object moves integer-like keys first), a repeated key at its first place with its last value.
 * An int of any size keeps its digits (its value: see jsonNumberValue). Undefined if the text
 * is not JSON, or holds a float too large for a double (Python's inf, which json.dumps writes
 * as `Infinity`, no JSON).
 *
 * @example redumpJson('{"id": 12345678901234567890}')?.json // '{"id":12345678901234567890}'
 */
export function redumpJson(text: string): Parsed | undefined {
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  // JSON.parse has checked the grammar: the reader below only has to follow it.
  return readValue({ text, at: 0 }, 0);
}

function skipSpace(r: Reader): void {
  while (r.at < r.text.length && ' \t\n\r'.includes(r.text[r.at]!)) r.at++;
}

function readValue(r: Reader, depth: number): Parsed | undefined {
  skipSpace(r);
  const c = r.text[r.at]!;
  if ((c === '{' || c === '[') && depth >= MAX_NESTING) return undefined;
  if (c === '{') return readObject(r, depth + 1);
  if (c === '[') return readArray(r, depth + 1);
  if (c === '"') {
    const value = readString(r);
    return { value, json: JSON.stringify(value) };
  }
  for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
    if (r.text.startsWith(word, r.at)) {
      r.at += word.length;
      return { value, json: word };
    }
  }
  NUMBER.lastIndex = r.at;
  const literal = NUMBER.exec(r.text)![0];
  r.at += literal.length;
  // Python reads a number without '.' or an exponent as an int: exact, and never -0.
  if (!/[.eE]/.test(literal)) {
    const json = pythonIntJson(literal);
    return { value: jsonNumberValue(json), json };
  }
  const value = Number(literal);
  if (!Number.isFinite(value)) return undefined;
  return { value, json: pythonFloatJson(value) };
}

function readString(r: Reader): string {
  const start = r.at;
  r.at++;
  while (r.text[r.at] !== '"') r.at += r.text[r.at] === '\\' ? 2 : 1;
  r.at++;
  return JSON.parse(r.text.slice(start, r.at)) as string;
}

function readArray(r: Reader, depth: number): Parsed | undefined {
  const items: unknown[] = [];
  const json: string[] = [];
  r.at++;
  skipSpace(r);
  if (r.text[r.at] === ']') {
    r.at++;
    return { value: items, json: '[]' };
  }
  for (;;) {
    const item = readValue(r, depth);
    if (item === undefined) return undefined;
    items.push(item.value);
    json.push(item.json);
    skipSpace(r);
    if (r.text[r.at++] === ']') return { value: items, json: `[${json.join(',')}]` };
  }
}

function readObject(r: Reader, depth: number): Parsed | undefined {
  const object: Record<string, unknown> = {};
  const json = new Map<string, string>();
  r.at++;
  skipSpace(r);
  if (r.text[r.at] === '}') {
    r.at++;
    return { value: object, json: '{}' };
  }
  for (;;) {
    skipSpace(r);
    const key = readString(r);
    skipSpace(r);
    r.at++; // ':'
    const item = readValue(r, depth);
    if (item === undefined) return undefined;
    setOwn(object, key, item.value);
    json.set(key, item.json);
    skipSpace(r);
    if (r.text[r.at++] === '}') {
      let text = '';
      for (const [k, v] of json) text += `${text === '' ? '' : ','}${JSON.stringify(k)}:${v}`;
      return { value: object, json: `{${text}}` };
    }
  }
}
