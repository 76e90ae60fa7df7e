export type SkipResult =
  /** Still inside the call: all of the chunk belongs to it. */
  | { kind: 'more' }
  /** The call's `)` is the character before `end`; the list goes on at `end`. */
  | { kind: 'closed'; end: number }
  /** The character at `at` cannot be in the call (`reason` says why): the list ends before it. */
  | { kind: 'broken'; at: number; reason: string };

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * Reads on through a pythonic call the parser has given up on (a value that is no literal it
 * reads, such as `b'z'`, `1e999` or a name, or a positional or repeated argument) to the `)`
 * that closes it, so the list's next calls still run. It knows just enough Python to find that
 * parenthesis: brackets, strings (any prefix, one or three quotes, backslash escapes) and
 * comments. Fed the call's text from its name on, then what follows, chunk by chunk, so where it
 * stops does not depend on how the text is split.
 */
export class PythonCallSkipper {
  /** The closers the open brackets expect, innermost last; the call's own `)` first. */
  readonly #closers: string[] = [];
  /** Inside a string: its quote; '' outside one. */
  #quote = '';
  #triple = false;
  /** Quotes just read: at an opening (1 or 2 so far), or closing quotes inside a triple-quoted string. */
  #quotes = 0;
  #opening = false;
  #escape = false;
  #comment = false;

  feed(chunk: string, from = 0): SkipResult {
    for (let i = from; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.#opening) {
        if (c === this.#quote) {
          this.#quotes += 1;
          if (this.#quotes < 3) continue;
          // ''' opens a triple-quoted string.
          this.#opening = false;
          this.#triple = true;
          this.#quotes = 0;
          continue;
        }
        this.#opening = false;
        if (this.#quotes === 2) this.#quote = ''; // '' is an empty string: c is outside it
        this.#quotes = 0;
      }
      if (this.#quote !== '') {
        const broken = this.#inString(c, i);
        if (broken !== undefined) return broken;
        continue;
      }
      if (this.#comment) {
        if (c === '\n') this.#comment = false;
        continue;
      }
      if (c === '#') this.#comment = true;
      else if (c === "'" || c === '"') {
        this.#quote = c;
        this.#opening = true;
        this.#quotes = 1;
      } else if (c === '(' || c === '[' || c === '{') this.#closers.push(CLOSER[c]!);
      else if (c === ')' || c === ']' || c === '}') {
        const expected = this.#closers.pop();
        if (expected !== c) return { kind: 'broken', at: i, reason: expected === undefined ? `unexpected '${c}'` : `expected '${expected}', got '${c}'` };
        if (this.#closers.length === 0) return { kind: 'closed', end: i + 1 };
      }
    }
    return { kind: 'more' };
  }

  #inString(c: string, i: number): SkipResult | undefined {
    if (this.#escape) {
      this.#escape = false;
      return undefined;
    }
    if (c === this.#quote) {
      this.#quotes += 1;
      if (!this.#triple || this.#quotes === 3) {
        this.#quote = '';
        this.#triple = false;
        this.#quotes = 0;
      }
      return undefined;
    }
    this.#quotes = 0;
    if (c === '\\') this.#escape = true;
    else if (c === '\n' && !this.#triple) return { kind: 'broken', at: i, reason: 'unterminated string (newline inside quotes)' };
    return undefined;
  }
}
