import { jsonNumberValue } from '../json/json-number-value.ts';
import { PythonLexer, PythonSyntaxError, type PythonToken } from './python-literal-lexer.ts';

/** A dict entry: the JSON key its Python key prints as, and its value and the value's JSON. */
interface Entry {
  key: string;
  value: unknown;
  json: string;
}

// Each frame also keeps its items' JSON text (see `json`). A dict's entries are keyed by the
// Python key's identity (see keyIdentity), in a Map, which keeps a repeated key at its first
// place with its last value, as a Python dict does; `identity` is the pending key's.
type Frame =
  | { kind: 'list' | 'tuple'; items: unknown[]; json: string[]; expectItem: boolean; sawComma: boolean }
  | { kind: 'dict'; entries: Map<string, Entry>; identity: string; key: string; state: 'key' | 'colon' | 'value' | 'comma' };

const CLOSER = { list: ']', tuple: ')', dict: '}' } as const;

/**
 * How deep a value's lists, tuples and dicts may nest, as for JSON arguments (the JSON scanner's
 * `maxNesting`). The parser itself keeps an explicit stack, but what walks the value next recurses:
 * `JSON.stringify` of the call's arguments in the next round's assistant turn, a plan's `$n`
 * substitution. 20,000 nested lists in a plan step overflowed the stack there: the whole request
 * answered 500. No tool's arguments need this depth.
 */
export const MAX_PYTHON_NESTING = 256;

/** The value nests deeper than its parser allows (MAX_PYTHON_NESTING by default). */
export class PythonNestingError extends PythonSyntaxError {}

/**
 * Builds one Python literal (what `ast.literal_eval` accepts, minus sets, bytes and complex
 * numbers) from tokens, as its JSON value: tuples become arrays, dict keys become strings the
 * way `json.dumps` writes them. Tokens are offered one by one; `offer` answers false for the
 * first token that is not part of the value, which is how the caller learns the value closed:
 * adjacent strings concatenate, so a string is complete only once a non-string token follows.
 */
export class PythonValueParser {
  readonly #maxNesting: number;
  #stack: Frame[] = [];
  #done = false;
  #value: unknown;
  #json = '';
  #pendingString: string | undefined;
  #sign: 1 | -1 | undefined;

  /** `maxNesting`: containers deeper than this are a PythonNestingError (default MAX_PYTHON_NESTING). */
  constructor(options: { maxNesting?: number } = {}) {
    this.#maxNesting = options.maxNesting ?? MAX_PYTHON_NESTING;
  }

  /** Whether `token` belongs to the value; false means the value is complete (see `value`). */
  offer(token: PythonToken): boolean {
    if (this.#pendingString !== undefined) {
      if (token.kind === 'string') {
        this.#pendingString += token.value;
        return true;
      }
      const text = this.#pendingString;
      this.#pendingString = undefined;
      this.#deliver(text, JSON.stringify(text));
    }
    if (this.#done) return false;
    if (this.#sign !== undefined) {
      if (token.kind !== 'number') throw new PythonSyntaxError('a sign must be followed by a number');
      const sign = this.#sign;
      this.#sign = undefined;
      if (sign > 0) this.#deliver(token.value, token.json);
      // Python's -0.0 stays -0.0 (json.dumps writes it so); an int has no -0.
      else if (token.float) this.#deliver(-token.value, `-${token.json}`);
      else {
        const json = token.value === 0 ? '0' : `-${token.json}`;
        this.#deliver(jsonNumberValue(json), json);
      }
      return true;
    }
    const frame = this.#stack[this.#stack.length - 1];
    if (frame === undefined || (frame.kind !== 'dict' && frame.expectItem) || (frame.kind === 'dict' && (frame.state === 'key' || frame.state === 'value'))) {
      this.#valueToken(token, frame);
      return true;
    }
    if (frame.kind === 'dict' && frame.state === 'colon') {
      if (token.kind !== 'punct' || token.value !== ':') throw new PythonSyntaxError("expected ':' after a dict key");
      frame.state = 'value';
      return true;
    }
    // After an item: a comma or the closing bracket.
    if (token.kind === 'punct' && token.value === ',') {
      if (frame.kind === 'dict') frame.state = 'key';
      else {
        frame.expectItem = true;
        frame.sawComma = true;
      }
      return true;
    }
    if (token.kind === 'punct' && token.value === CLOSER[frame.kind]) {
      this.#close();
      return true;
    }
    throw new PythonSyntaxError(`expected ',' or '${CLOSER[frame.kind]}' in a ${frame.kind}`);
  }

  /** The value, once complete. */
  get value(): unknown {
    return this.#value;
  }

  /**
   * The value's JSON as Python's `json.dumps` writes it, once complete: `JSON.stringify(value)`
   * but for dict keys in Python's order, ints past 2^53 with all their digits (`value`, made of
   * doubles, can only round them; the client reads the arguments from this text) and floats in
   * Python's repr (`1.0`, `-0.0`, `1e+16`).
   */
  get json(): string {
    return this.#json;
  }

  /** End of input: the value, or an error if it is incomplete. */
  finish(): unknown {
    if (this.#pendingString !== undefined) {
      const text = this.#pendingString;
      this.#pendingString = undefined;
      this.#deliver(text, JSON.stringify(text));
    }
    if (!this.#done) throw new PythonSyntaxError('incomplete value');
    return this.#value;
  }

  #valueToken(token: PythonToken, frame: Frame | undefined): void {
    switch (token.kind) {
      case 'string':
        this.#pendingString = token.value;
        return;
      case 'number':
        this.#deliver(token.value, token.json);
        return;
      case 'name':
        if (token.value === 'True') this.#deliver(true, 'true');
        else if (token.value === 'False') this.#deliver(false, 'false');
        else if (token.value === 'None') this.#deliver(null, 'null');
        else throw new PythonSyntaxError(`arguments must be literals, not the name ${token.value}`);
        return;
      case 'punct':
        switch (token.value) {
          case '[':
            this.#open({ kind: 'list', items: [], json: [], expectItem: true, sawComma: false });
            return;
          case '(':
            this.#open({ kind: 'tuple', items: [], json: [], expectItem: true, sawComma: false });
            return;
          case '{':
            this.#open({ kind: 'dict', entries: new Map(), identity: '', key: '', state: 'key' });
            return;
          case '-':
          case '+':
            this.#sign = token.value === '-' ? -1 : 1;
            return;
          default:
            // An empty container, or a trailing comma: `[]`, `(1,)`, `{'a': 1,}`.
            if (frame !== undefined && token.value === CLOSER[frame.kind] && (frame.kind !== 'dict' || frame.state === 'key')) {
              this.#close();
              return;
            }
            throw new PythonSyntaxError(`expected a value, got '${token.value}'`);
        }
    }
  }

  #open(frame: Frame): void {
    if (this.#stack.length >= this.#maxNesting) throw new PythonNestingError(`nested deeper than ${this.#maxNesting}`);
    this.#stack.push(frame);
  }

  #close(): void {
    const frame = this.#stack.pop()!;
    if (frame.kind === 'dict') {
      // Distinct Python keys that print as one JSON key (`{1: 'a', '1': 'b'}`): json.dumps writes
      // both ('{"1": "a", "1": "b"}'), and every JSON parser, the client's, vLLM's own json.loads
      // and ours, keeps the last, at the first one's place. That is what this writes, so the
      // client reads what it would read from vLLM, and the call-args text has no repeated key
      // (a JSON format's call with one is malformed). The call is not refused: a dict that
      // repeats a key (`{'a': 1, 'a': 2}`) is valid Python with the last value too.
      const object: Record<string, unknown> = {};
      const json = new Map<string, string>();
      for (const entry of frame.entries.values()) {
        setOwn(object, entry.key, entry.value);
        json.set(entry.key, entry.json);
      }
      let text = '';
      for (const [key, value] of json) text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${value}`;
      this.#deliver(object, `{${text}}`);
    } else if (frame.kind === 'tuple' && frame.items.length === 1 && !frame.sawComma) {
      this.#deliver(frame.items[0], frame.json[0]!);
    } else {
      this.#deliver(frame.items, `[${frame.json.join(',')}]`);
    }
  }

  #deliver(value: unknown, json: string): void {
    const frame = this.#stack[this.#stack.length - 1];
    if (frame === undefined) {
      this.#done = true;
      this.#value = value;
      this.#json = json;
    } else if (frame.kind !== 'dict') {
      frame.items.push(value);
      frame.json.push(json);
      frame.expectItem = false;
    } else if (frame.state === 'key') {
      frame.identity = keyIdentity(value, json);
      // Python keeps the key first written: {True: 'a', 1.0: 'b'} is {True: 'b'}, "true" in JSON.
      frame.key = frame.entries.get(frame.identity)?.key ?? (json.startsWith('"') ? (value as string) : json);
      frame.state = 'colon';
    } else {
      frame.entries.set(frame.identity, { key: frame.key, value, json });
      frame.state = 'comma';
    }
  }
}

/** Sets a property without the `__proto__` setter getting in the way. */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Equal for keys a Python dict holds as one, and only for them: a str is itself; equal numbers
 * are one key (`True == 1 == 1.0`, `0 == -0.0`), an integral one as its exact digits (the double
 * alone rounds big ints). `json` tells the kinds apart, since an int past 1.8e308 has its digits
 * as its value (see jsonNumberValue). `json.dumps` writes a key that is not a str as its JSON (an
 * int's digits, a float's repr, `true`, `null`); containers cannot be keys.
 */
function keyIdentity(value: unknown, json: string): string {
  if (json.startsWith('"')) return `str ${value as string}`;
  if (json === 'null') return 'None';
  if (json === 'true' || json === 'false') return json === 'true' ? '1' : '0';
  if (json.startsWith('[') || json.startsWith('{')) throw new PythonSyntaxError('dict keys must be strings, numbers, booleans or None');
  if (!/[.e]/.test(json)) return json;
  return Number.isInteger(value) ? BigInt(value as number).toString() : json;
}

/** A literal as PythonValueParser reads it, or why the text is not exactly one. */
export type PythonReading = { value: unknown; json: string } | { error: PythonSyntaxError };

/**
 * The Python literal `text` as JSON: its value and the text `json.dumps` writes for it (see
 * PythonValueParser.json), or the error that makes it no single literal.
 */
export function readPythonLiteral(text: string, options: { maxNesting?: number } = {}): PythonReading {
  const parser = new PythonValueParser(options);
  const lexer = new PythonLexer((token) => {
    if (!parser.offer(token)) throw new PythonSyntaxError('text after the value');
  });
  try {
    lexer.feed(text);
    lexer.finish();
    const value = parser.finish();
    return { value, json: parser.json };
  } catch (error) {
    if (error instanceof PythonSyntaxError) return { error };
    throw error;
  }
}

/** The Python literal `text` as JSON (see readPythonLiteral), or undefined if it is not exactly one literal. */
export function parsePythonLiteral(text: string): { value: unknown; json: string } | undefined {
  const reading = readPythonLiteral(text);
  return 'error' in reading ? undefined : reading;
}

/**
 * Positional call arguments `a, b` (the inside of a call's parentheses) as an array, and its JSON.
 * Each argument may nest as deep as a literal of its own (the list around them is not counted).
 */
export function readPythonArguments(text: string): PythonReading {
  return readPythonLiteral(`[${text}\n]`, { maxNesting: MAX_PYTHON_NESTING + 1 });
}
