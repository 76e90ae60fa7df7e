/** A token of the Python literal subset the tool-call formats use (keyword calls of literals). */
export type PythonToken =
  | { kind: 'punct'; value: '[' | ']' | '(' | ')' | '{' | '}' | ',' | ':' | '=' | '+' | '-' }
  | { kind: 'name'; value: string }
  /**
   * `json`: the number as `json.dumps` writes it, an int with every digit (`value`, a double,
   * rounds past 2^53; Python ints are exact), a float in Python's repr (`1.0`, `1e-05`). An int
   * no double holds has `json` as its value (see jsonNumberValue); a float always fits.
   */
  | { kind: 'number'; value: number; json: string; float: true }
  | { kind: 'number'; value: number | string; json: string; float: false }
  | { kind: 'string'; value: string };

/** The text cannot be what it claims to be; `message` says why, in the model's terms. */
export class PythonSyntaxError extends Error {}
