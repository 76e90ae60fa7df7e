/**
 * The value a JSON number literal becomes in a call's `args` and `field` pieces: the double
 * JSON.parse reads (rounded past 2^53, while the call-args text keeps every digit), except for a
 * literal no finite double can hold (past ±1.8e308: an id written out with 400 digits, `1e400`),
 * which stays the literal, as a string. JSON.parse would make it ±Infinity, which JSON.stringify
 * writes as `null` (so the turn the gateway replays to the model would read `null`) and a plugin
 * would compute with as if it were a number; the string keeps every digit, and the call-args
 * text the client reads still has the number.
 *
 * @example jsonNumberValue('1.5') // 1.5
 * @example jsonNumberValue('1e400') // '1e400'
 */
export function jsonNumberValue(literal: string): number | string {
  const value = Number(literal);
  return Number.isFinite(value) ? value : literal;
}
