/**
 * Operators as models write them, copied from typeset text (U+2212 minus, ×, ÷, the middle dots)
 * or from Python (`**`), and `% of`, that mathjs does not read: `3 − 2` failed with `Syntax error in part
 * "− 2"`, `2**10` with `Value expected`, neither saying which character to change. Each becomes
 * mathjs' own operator, of the same precedence (`**` and `^` both bind tighter than unary minus
 * and group from the right). Same length, so an error's `(char n)` points where the model wrote it.
 */
const SPELLINGS: Readonly<Record<string, string>> = { '\u2212': '-', '\u00D7': '*', '\u22C5': '*', '\u00B7': '*', '\u00F7': '/', '**': '^ ' };
/**
 * `10% of 200`, as people write a percentage: mathjs answered "Undefined symbol of". After a `%`
 * the word can mean nothing else, so it is mathjs' `*` (same length: `10% * 200` is 20).
 */
const PERCENT_OF = /^%(\s*)of$/u;
const SPELLING = /\u2212|\u00D7|\u22C5|\u00B7|\u00F7|\*\*|%\s*of(?![\p{L}\p{N}_])|"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?/gsu;

/**
 * `expression` with those operators in mathjs' spelling; string literals (mathjs' `"…"` and `'…'`,
 * backslash escapes) are left as written.
 *
 * @example
 * mathjsOperators('2 × 3 − 1') // '2 * 3 - 1'
 */
export function mathjsOperators(expression: string): string {
  return expression.replace(SPELLING, (match) => SPELLINGS[match] ?? match.replace(PERCENT_OF, '%$1* '));
}
