import { PythonLexer, PythonSyntaxError, type PythonToken } from './python-literal-lexer.ts';

// Each frame also keeps its items' JSON text (see `json`); a dict's in a Map, which keeps a
// repeated key at its first place with its last value, as a Python dict does. `numbers` maps a
// number key's value (see numberIdentity) to the JSON key it was first written as.
type Frame =
  | { kind: 'list' | 'tuple'; items: unknown[]; json: string[]; expectItem: boolean; sawComma: boolean }
  | { kind: 'dict'; object: Record<string, unknown>; json: Map<string, string>; numbers: Map<string, string>; key: string; state: 'key' | 'colon' | 'value' | 'comma' };

const CLOSER = { list: ']', tuple: ')', dict: '}' } as const;

/**
 * Builds one Python literal (what `ast.literal_eval` accepts, minus sets, bytes and complex
 * numbers) from tokens, as its JSON value: tuples become arrays, dict keys become strings the
 * way `json.dumps` writes them. Tokens are offered one by one; `offer` answers false for the
 * first token that is not part of the value, which is how the caller learns the value closed:
 * adjacent strings concatenate, so a string is complete only once a non-string token follows.
 */
export class PythonValueParser {
  #stack: Frame[] = [];
  #done = false;
  #value: unknown;
  #json = '';
  #pendingString: string | undefined;
  #sign: 1 | -1 | undefined;

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
      else this.#deliver(-token.value + 0, token.value === 0 ? '0' : `-${token.json}`);
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
            this.#stack.push({ kind: 'list', items: [], json: [], expectItem: true, sawComma: false });
            return;
          case '(':
            this.#stack.push({ kind: 'tuple', items: [], json: [], expectItem: true, sawComma: false });
            return;
          case '{':
            this.#stack.push({ kind: 'dict', object: {}, json: new Map(), numbers: new Map(), key: '', state: 'key' });
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

  #close(): void {
    const frame = this.#stack.pop()!;
    if (frame.kind === 'dict') {
      let json = '';
      for (const [key, value] of frame.json) json += `${json === '' ? '' : ','}${JSON.stringify(key)}:${value}`;
      this.#deliver(frame.object, `{${json}}`);
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
      frame.key = dictKey(value, json, frame.numbers);
      frame.state = 'colon';
    } else {
      setOwn(frame.object, frame.key, value);
      frame.json.set(frame.key, json);
      frame.state = 'comma';
    }
  }
}

/** Sets a property without the `__proto__` setter getting in the way. */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `json.dumps` turns keys that are not strings into their JSON (an int's digits, a float's
 * repr, `true`, `null`), which `json` already is; containers cannot be keys. Equal numbers are
 * one key in Python (`True == 1 == 1.0`, `0 == -0.0`): the dict keeps the first one written,
 * so `{True: 'a', 1.0: 'b'}` is `{"true": "b"}`.
 */
function dictKey(value: unknown, json: string, numbers: Map<string, string>): string {
  if (typeof value === 'string') return value;
  if (value === null) return json;
  if (typeof value !== 'number' && typeof value !== 'boolean') throw new PythonSyntaxError('dict keys must be strings, numbers, booleans or None');
  const identity = numberIdentity(value, json);
  const first = numbers.get(identity);
  if (first !== undefined) return first;
  numbers.set(identity, json);
  return json;
}

/** Equal for equal Python numbers: an integral value as its exact digits (the double alone rounds big ints). */
function numberIdentity(value: number | boolean, json: string): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (!/[.e]/.test(json)) return json;
  return Number.isInteger(value) ? BigInt(value).toString() : json;
}

/**
 * The Python literal `text` as JSON, or undefined if it is not exactly one literal: its value
 * and the text `json.dumps` writes for it (see PythonValueParser.json).
 */
export function parsePythonLiteral(text: string): { value: unknown; json: string } | undefined {
  const parser = new PythonValueParser();
  const lexer = new PythonLexer((token) => {
    if (!parser.offer(token)) throw new PythonSyntaxError('text after the value');
  });
  try {
    lexer.feed(text);
    lexer.finish();
    const value = parser.finish();
    return { value, json: parser.json };
  } catch (error) {
    if (error instanceof PythonSyntaxError) return undefined;
    throw error;
  }
}

/** Positional call arguments `a, b` (the inside of a call's parentheses) as an array. */
export function parsePythonArguments(text: string): unknown[] | undefined {
  const parsed = parsePythonLiteral(`[${text}\n]`);
  return parsed === undefined ? undefined : (parsed.value as unknown[]);
}
