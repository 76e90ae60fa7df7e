export const FUNCTION = '<function=';
export const PARAMETER = '<parameter=';
export const FUNCTION_END = '</function>';

export type FunctionOpener =
  /** A call to `name`; `consumed` characters of the text are its opener. */
  | { kind: 'call'; name: string; consumed: number }
  /** The text so far could still become one: wait for more. */
  | { kind: 'more' }
  /** Not a call: the marker is prose. */
  | { kind: 'prose' };

/**
 * Reads the start of a Qwen3-Coder call. After `<tool_call>` (`bare` false): whitespace, then
 * `<function=name>`. A bare `<function=name>` in prose (`bare` true) is a call only once the
 * function body shows, after whitespace, as `<parameter=` or `</function>`: Qwen3-Coder often
 * drops the `<tool_call>` opener (and still writes the closing `</tool_call>`); vLLM's
 * qwen3_coder keys on `<function=` for that reason, while a tag merely named in prose
 * ("use <function=name> tags") is followed by prose and stays text.
 */
export function readFunctionOpener(text: string, bare: boolean): FunctionOpener {
  let i = bare ? 0 : skipSpace(text, 0);
  const at = text.slice(i);
  if (!at.startsWith(FUNCTION)) return FUNCTION.startsWith(at) ? { kind: 'more' } : { kind: 'prose' };
  const after = at.slice(FUNCTION.length);
  const close = after.indexOf('>');
  const name = close === -1 ? after : after.slice(0, close);
  if (!isName(name) || close === 0) return { kind: 'prose' };
  if (close === -1) return { kind: 'more' };
  i += FUNCTION.length + close + 1;
  if (!bare) return { kind: 'call', name, consumed: i };
  const body = skipSpace(text, i);
  const rest = text.slice(body);
  if (rest.startsWith(PARAMETER) || rest.startsWith(FUNCTION_END)) return { kind: 'call', name, consumed: body };
  return PARAMETER.startsWith(rest) || FUNCTION_END.startsWith(rest) ? { kind: 'more' } : { kind: 'prose' };
}

export function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** Names are what stands between `=` and `>`; whitespace or `<` there means it is no tag. */
export function isName(text: string): boolean {
  return !/[\s<]/.test(text);
}

function skipSpace(text: string, from: number): number {
  while (from < text.length && isSpace(text[from]!)) from++;
  return from;
}
