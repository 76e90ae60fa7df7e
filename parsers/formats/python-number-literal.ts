import { jsonNumberValue } from '../json/json-number-value.ts';
import { pythonFloatJson, pythonIntJson } from './python-number-json.ts';
import { PythonSyntaxError, type PythonToken } from './python-token.ts';

const DIGITS = String.raw`\d(?:_?\d)*`;
const INT = /^(?:[1-9](?:_?\d)*|0(?:_?0)*)$/;
const RADIX_INT = /^0(?:[xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)$/;
const FLOAT = new RegExp(String.raw`^(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.?)(?:[eE][+-]?${DIGITS})?$`);

/**
 * A Python number literal as the lexer collected it (digits, letters, `_`, `.`, an exponent's
 * sign; no leading sign, which is a `punct` token): an int (decimal, 0x/0o/0b, underscores
 * between digits) or a float, as a `number` token. Anything else, or a float no double can
 * hold, is a PythonSyntaxError: Python reads `1e400` as inf, which json.dumps writes as
 * `Infinity`, no JSON. An int of any size is fine, as in Python.
 */
export function parsePythonNumber(text: string): Extract<PythonToken, { kind: 'number' }> {
  if (INT.test(text) || RADIX_INT.test(text)) {
    const digits = text.replaceAll('_', '').toLowerCase();
    const value = Number(digits);
    if (Number.isSafeInteger(value)) return { kind: 'number', value, json: String(value), float: false };
    // An id past 2^53 (a snowflake) must reach the client digit for digit, as json.dumps writes
    // it; past 1.8e308 a double would be Infinity, and the JSON number literal is still exact.
    const json = pythonIntJson(digits);
    return { kind: 'number', value: jsonNumberValue(json), json, float: false };
  }
  if (!(FLOAT.test(text) && /[.eE]/.test(text))) throw new PythonSyntaxError(`invalid number ${JSON.stringify(text)}`);
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isFinite(value)) throw new PythonSyntaxError(`number ${text} is out of range`);
  return { kind: 'number', value, json: pythonFloatJson(value), float: true };
}
