export const TOOL_CALL = '<tool_call>';
export const TOOL_CALL_END = '</tool_call>';
export const FUNCTION = '<function=';
export const FUNCTION_END = '</function>';
export const PARAMETER = '<parameter=';
export const PARAMETER_END = '</parameter>';

export type FunctionTag =
  /** `<function=name>`: `consumed` characters of the text. */
  | { kind: 'tag'; name: string; consumed: number }
  /** The text so far could still become one: wait for more. */
  | { kind: 'more' }
  /** Not a function tag. */
  | { kind: 'prose' };

/**
 * Reads `<function=name>` at the start of `text`. After `<tool_call>` and whitespace it opens a
 * call. A bare one in prose is a call only once the function body shows (bodyStart): Qwen3-Coder
 * often drops the `<tool_call>` opener (and still writes the closing `</tool_call>`); vLLM's
 * qwen3_coder keys on `<function=` for that reason, while a tag merely named in prose
 * ("use <function=name> tags") is followed by prose and stays text.
 */
export function readFunctionTag(text: string): FunctionTag {
  if (!text.startsWith(FUNCTION)) return FUNCTION.startsWith(text) ? { kind: 'more' } : { kind: 'prose' };
  // Read only as far as the name goes: `<function=<function=…` in one delta searched the whole
  // rest for a ">" at every "<function=".
  const end = NAME_END.exec(text.slice(FUNCTION.length));
  if (end === null) return { kind: 'more' };
  if (end[0] !== '>' || end.index === 0) return { kind: 'prose' };
  return { kind: 'tag', name: text.slice(FUNCTION.length, FUNCTION.length + end.index), consumed: FUNCTION.length + end.index + 1 };
}

/** What ends a tag's name: its ">", or whitespace or "<", which mean it is no tag (isName). */
const NAME_END = /[>\s<]/;

/**
 * After a bare `<function=name>` and the whitespace that follows it: whether `text` opens the
 * function's body (`<parameter=` or `</function>`), could still, or is prose.
 */
export function bodyStart(text: string): 'body' | 'more' | 'prose' {
  if (text.startsWith(PARAMETER) || text.startsWith(FUNCTION_END)) return 'body';
  return PARAMETER.startsWith(text) || FUNCTION_END.startsWith(text) ? 'more' : 'prose';
}

/** How many whitespace characters `text` starts with. */
export function leadingSpace(text: string): number {
  let i = 0;
  while (i < text.length && isSpace(text[i]!)) i++;
  return i;
}

export function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** Names are what stands between `=` and `>`; whitespace or `<` there means it is no tag. */
export function isName(text: string): boolean {
  return !/[\s<]/.test(text);
}
