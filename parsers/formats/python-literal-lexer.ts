import { parsePythonNumber } from './python-number-literal.ts';
import { PythonSyntaxError, type PythonToken } from './python-token.ts';

export { PythonSyntaxError, type PythonToken } from './python-token.ts';

type State = 'idle' | 'name' | 'number' | 'dot' | 'comment' | 'continuation' | 'open1' | 'open2' | 'body' | 'escape' | 'digits';

const PUNCT = new Set(['[', ']', '(', ')', '{', '}', ',', ':', '=', '+', '-']);
const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\n': '',
};

/**
 * Tokenises Python source one UTF-16 unit at a time, keeping its state between chunks, so a
 * token split across deltas (a long string argument) costs nothing extra. Strings follow
 * Python 3: single, double and triple quotes, r/u prefixes, every escape except \N{…};
 * numbers cover ints (with 0x/0o/0b and underscores) and floats. A name or number ends only
 * at the next character, so it is emitted when that character is fed (or at `finish`).
 */
export class PythonLexer {
  /** Index, in the chunk being fed, of the character being processed (for error positions). */
  index = 0;
  #state: State = 'idle';
  #text = '';
  #quote = '';
  #triple = false;
  #raw = false;
  #quoteRun = 0;
  /** Escape digits: which kind (o = octal, x/u/U = hex) and how many are still allowed. */
  #digitKind = '';
  #digits = '';
  #stopped = false;
  readonly #onToken: (token: PythonToken) => boolean | void;

  /** `onToken` may return false to stop feeding right after the current character. */
  constructor(onToken: (token: PythonToken) => boolean | void) {
    this.#onToken = onToken;
  }

  /** Feeds `chunk` from `from`; returns where it stopped (chunk.length unless a token asked to stop). */
  feed(chunk: string, from = 0): number {
    this.#stopped = false;
    for (let i = from; i < chunk.length; i++) {
      this.index = i;
      if (this.#state === 'body' && this.#quoteRun === 0) {
        // Fast path through string contents: copy up to the next character that matters.
        let j = i;
        while (j < chunk.length) {
          const c = chunk[j];
          if (c === this.#quote || c === '\\' || c === '\n') break;
          j++;
        }
        if (j > i) {
          this.#text += chunk.slice(i, j);
          i = j - 1;
          continue;
        }
      }
      this.#char(chunk[i]!);
      if (this.#stopped) return i + 1;
    }
    return chunk.length;
  }

  /** End of input: completes a pending name or number; an open string is an error. */
  finish(): void {
    switch (this.#state) {
      case 'name':
      case 'number':
      case 'dot':
        this.#endWord();
        return;
      case 'open2':
        this.#emit({ kind: 'string', value: '' });
        this.#state = 'idle';
        return;
      case 'open1':
      case 'body':
      case 'escape':
      case 'digits':
        throw new PythonSyntaxError('unterminated string');
      case 'continuation':
        throw new PythonSyntaxError('unexpected end after a line-continuation backslash');
      default:
        return;
    }
  }

  #char(c: string): void {
    switch (this.#state) {
      case 'idle':
        return this.#idle(c);
      case 'name':
        if (isNameChar(c)) {
          this.#text += c;
          return;
        }
        if (c === "'" || c === '"') return this.#prefixedString(c);
        this.#endWord();
        return this.#idle(c);
      case 'number':
      case 'dot':
        if (isNameChar(c) || c === '.' || ((c === '+' || c === '-') && /^[0-9.][0-9_.]*[eE]$/.test(this.#text))) {
          this.#text += c;
          this.#state = 'number';
          return;
        }
        this.#endWord();
        return this.#idle(c);
      case 'comment':
        if (c === '\n') this.#state = 'idle';
        return;
      case 'continuation':
        if (c !== '\n') throw new PythonSyntaxError('unexpected character after a line-continuation backslash');
        this.#state = 'idle';
        return;
      case 'open1':
        if (c === this.#quote) {
          this.#state = 'open2';
          return;
        }
        this.#state = 'body';
        return this.#body(c);
      case 'open2':
        if (c === this.#quote) {
          this.#triple = true;
          this.#state = 'body';
          return;
        }
        this.#emit({ kind: 'string', value: '' });
        this.#state = 'idle';
        return this.#idle(c);
      case 'body':
        return this.#body(c);
      case 'escape':
        return this.#escape(c);
      case 'digits':
        return this.#escapeDigit(c);
    }
  }

  #idle(c: string): void {
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f') return;
    if (PUNCT.has(c)) {
      this.#emit({ kind: 'punct', value: c as Extract<PythonToken, { kind: 'punct' }>['value'] });
      return;
    }
    if (c === "'" || c === '"') return this.#openString(c, false);
    this.#text = c;
    if (isNameStart(c)) this.#state = 'name';
    else if (c >= '0' && c <= '9') this.#state = 'number';
    else if (c === '.') this.#state = 'dot';
    else if (c === '#') this.#state = 'comment';
    else if (c === '\\') this.#state = 'continuation';
    else throw new PythonSyntaxError(`unexpected character ${JSON.stringify(c)}`);
  }

  #prefixedString(quote: string): void {
    const prefix = this.#text.toLowerCase();
    if (prefix !== 'r' && prefix !== 'u') {
      throw new PythonSyntaxError(`${this.#text}-prefixed strings are not plain literals`);
    }
    this.#openString(quote, prefix === 'r');
  }

  #openString(quote: string, raw: boolean): void {
    this.#quote = quote;
    this.#raw = raw;
    this.#triple = false;
    this.#quoteRun = 0;
    this.#text = '';
    this.#state = 'open1';
  }

  #body(c: string): void {
    if (c === this.#quote) {
      if (!this.#triple) return this.#endString();
      this.#quoteRun += 1;
      if (this.#quoteRun === 3) this.#endString();
      return;
    }
    if (this.#quoteRun > 0) {
      this.#text += this.#quote.repeat(this.#quoteRun);
      this.#quoteRun = 0;
    }
    if (c === '\\') {
      this.#state = 'escape';
      return;
    }
    if (c === '\n' && !this.#triple) throw new PythonSyntaxError('unterminated string (newline inside quotes)');
    this.#text += c;
  }

  #endString(): void {
    this.#state = 'idle';
    this.#quoteRun = 0;
    this.#emit({ kind: 'string', value: this.#text });
  }

  #escape(c: string): void {
    this.#state = 'body';
    if (this.#raw) {
      // A raw string keeps the backslash; it only stops the next character closing the string.
      this.#text += `\\${c}`;
      return;
    }
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) {
      this.#text += simple;
      return;
    }
    if (c >= '0' && c <= '7') {
      this.#startDigits('o', c);
      return;
    }
    if (c === 'x' || c === 'u' || c === 'U') {
      this.#startDigits(c, '');
      return;
    }
    if (c === 'N') throw new PythonSyntaxError('\\N{…} escapes are not supported');
    // Python keeps unknown escapes as they are (with a warning).
    this.#text += `\\${c}`;
  }

  #startDigits(kind: string, first: string): void {
    this.#digitKind = kind;
    this.#digits = first;
    this.#state = 'digits';
  }

  #escapeDigit(c: string): void {
    const kind = this.#digitKind;
    const want = kind === 'o' ? 3 : kind === 'x' ? 2 : kind === 'u' ? 4 : 8;
    const isDigit = kind === 'o' ? c >= '0' && c <= '7' : /^[0-9a-fA-F]$/.test(c);
    if (isDigit) {
      this.#digits += c;
      if (this.#digits.length === want) this.#endDigits();
      return;
    }
    if (kind !== 'o') throw new PythonSyntaxError(`truncated \\${kind} escape`);
    this.#endDigits();
    this.#state = 'body';
    this.#body(c);
  }

  #endDigits(): void {
    const code = Number.parseInt(this.#digits, this.#digitKind === 'o' ? 8 : 16);
    if (code > 0x10ffff) throw new PythonSyntaxError(`illegal Unicode character in \\${this.#digitKind} escape`);
    this.#text += String.fromCodePoint(code);
    this.#state = 'body';
  }

  #endWord(): void {
    const text = this.#text;
    const wasName = this.#state === 'name';
    this.#state = 'idle';
    if (wasName) this.#emit({ kind: 'name', value: text });
    else this.#emit(parsePythonNumber(text));
  }

  #emit(token: PythonToken): void {
    if (this.#onToken(token) === false) this.#stopped = true;
  }
}

function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isNameChar(c: string): boolean {
  return isNameStart(c) || (c >= '0' && c <= '9');
}
