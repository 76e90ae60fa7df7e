/**
 * A plan step's literal for a parameter that only takes text. LLMCompiler's tools are Python
 * functions that take what the model wrote (`math(5)`); a JSON Schema tool with `type: "string"`
 * refused the number with zod's "expected string, received number", which told the model nothing
 * it meant to change. A number becomes its digits and a boolean Python's `True` / `False`, as the
 * model wrote them; None, lists and dicts have no one text and are left to the tool's check, and
 * so is an integer past 2^53, whose digits the literal no longer holds.
 *
 * @example
 * literalAsText({ type: 'string' }, 5) // '5'
 */
export function literalAsText(property: unknown, value: unknown): unknown {
  if (!takesTextOnly(property)) return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))) return String(value);
  return value;
}

function takesTextOnly(property: unknown): boolean {
  const type = (property as { type?: unknown } | null)?.type;
  return type === 'string' || (Array.isArray(type) && type.includes('string') && !type.some((t) => t === 'number' || t === 'integer' || t === 'boolean'));
}
