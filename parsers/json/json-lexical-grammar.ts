/** JSON's lexical grammar (RFC 8259 §2, §6, §7), one character at a time, for the scanner's hot loop. */

/** Number states: after "-", after a leading "0", in the integer digits, after ".", in the
 * fraction, after "e", after the exponent's sign, in the exponent. */
export const NUM_MINUS = 9;
export const NUM_ZERO = 10;
export const NUM_INT = 11;
export const NUM_DOT = 12;
export const NUM_FRAC = 13;
export const NUM_E = 14;
export const NUM_E_SIGN = 15;
export const NUM_EXP = 16;

/**
 * What the single-character escape "\\" + `c` stands for, or undefined if there is none ("\\u"
 * is separate). A switch on the code rather than a lookup by a one-character string: escapes are
 * a large share of the characters in code arguments.
 */
export function decodeEscape(c: number): string | undefined {
  switch (c) {
    case 110: // n
      return '\n';
    case 34: // "
      return '"';
    case 92: // \
      return '\\';
    case 116: // t
      return '\t';
    case 47: // /
      return '/';
    case 114: // r
      return '\r';
    case 98: // b
      return '\b';
    case 102: // f
      return '\f';
    default:
      return undefined;
  }
}

export function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** The value of a hex digit, or -1. */
export function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * The number state after character `c` in number state `state`: another number state, -1 if
 * `c` cannot come there (malformed), or -2 if the number has ended before `c` (legal only in the
 * states after a digit).
 */
export function nextNumberState(state: number, c: number): number {
  const digit = c >= 48 && c <= 57;
  switch (state) {
    case NUM_MINUS:
      return c === 48 ? NUM_ZERO : digit ? NUM_INT : -1;
    case NUM_ZERO:
      return c === 46 ? NUM_DOT : c === 101 || c === 69 ? NUM_E : -2;
    case NUM_INT:
      return digit ? NUM_INT : c === 46 ? NUM_DOT : c === 101 || c === 69 ? NUM_E : -2;
    case NUM_DOT:
      return digit ? NUM_FRAC : -1;
    case NUM_FRAC:
      return digit ? NUM_FRAC : c === 101 || c === 69 ? NUM_E : -2;
    case NUM_E:
      return digit ? NUM_EXP : c === 43 || c === 45 ? NUM_E_SIGN : -1;
    case NUM_E_SIGN:
      return digit ? NUM_EXP : -1;
    case NUM_EXP:
      return digit ? NUM_EXP : -2;
    default:
      return -1;
  }
}
