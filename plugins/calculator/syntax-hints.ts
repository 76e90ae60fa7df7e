/** mathjs string literals, as operator-spelling.ts reads them: what they hold is text, not syntax. */
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?/gsu;

/**
 * Habits from other languages that mathjs answers with a bare syntax error: Python's floor
 * division, a thousands separator, typeset comparison and root signs. The error names the character; the hint names the fix.
 */
const HINTS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\/\//, 'the calculator has no // (floor division): write floor(a / b)'],
  [/\d,\d{3}(?!\d)/, 'write numbers without thousands separators (1000, not 1,000)'],
  // Typeset signs copied with a formula: hinted, not respelt as operator-spelling.ts does, since
  // `<=` and `sqrt(…)` are longer and an error's (char n) must point where the model wrote it.
  [/[≤≥≠]/u, 'write <=, >= and != for ≤, ≥ and ≠'],
  [/√/u, 'write sqrt(x) for √x'],
];

/**
 * `error` with a hint when the expression that failed holds one of those habits outside a string
 * literal; as it was otherwise.
 *
 * @example
 * withSyntaxHint('7 // 2', 'Value expected (char 4)') // 'Value expected (char 4); the calculator has no // …'
 */
export function withSyntaxHint(expression: string, error: string): string {
  const code = expression.replace(STRING_LITERAL, '""');
  const hints = HINTS.filter(([pattern]) => pattern.test(code)).map(([, hint]) => hint);
  return [error, ...hints].join('; ');
}
