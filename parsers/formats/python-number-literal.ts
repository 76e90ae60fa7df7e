import { pythonFloatJson, pythonIntJson } from './python-number-json.ts';
import { PythonSyntaxError, type PythonToken } from './python-token.ts';

const DIGITS = String.raw`\d(?:_?\d)*`;
const INT = /^(?:[1-9](?:_?\d)*|0(?:_?0)*)$/;
const RADIX_INT = /^0(?:[xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)$/;
const FLOAT = new RegExp(String.raw`^(?:(?:${DIGITS})?\.${DIGITS}|${DIGITS}\.?)(?:[eE][+-]?${DIGITS})?$`);

/**
 * A Python number literal as the lexer collected it (digits, letters, `_`, `.`, an exponent's
 * sign; no leading sign, which is a `punct` token): an int (decimal, 0x/0o/0b, underscores
 * between digits) or a float, as a `number` token. Anything else, or a value no double can
 * hold, is a PythonSyntaxError.
 */
export function parsePythonNumber(text: string): Extract<PythonToken, { kind: 'number' }> {
  if (INT.test(text) || RADIX_INT.test(text)) {
    const digits = text.replaceAll('_', '').toLowerCase();
    const value = Number(digits);
    if (!Number.isFinite(value)) throw new PythonSyntaxError(`number ${text} is out of range`);
    // An id past 2^53 (a snowflake) must reach the client digit for digit, as json.dumps writes it.
    return { kind: 'number', value, json: Number.isSafeInteger(value) ? String(value) : pythonIntJson(digits), float: false };
  }
  if (!(FLOAT.test(text) && /[.eE]/.test(text))) throw new PythonSyntaxError(`invalid number ${JSON.stringify(text)}`);
  const value = Number(text.replaceAll('_', ''));
  if (!Number.isFinite(value)) throw new PythonSyntaxError(`number ${text} is out of range`);
  return { kind: 'number', value, json: pythonFloatJson(value), float: true };
}
