import { exactShape, scanEvent, type JsonPath, type JsonScanEvent, type ValueKind } from './json-scan-event.ts';
import { isWhitespace, nextNumberState, NUM_EXP, NUM_FRAC, NUM_INT, NUM_MINUS, NUM_ZERO } from './json-lexical-grammar.ts';

export interface JsonStructureOptions {
  /** Emit `field` for values with 1 <= depth <= this (depth = path length). Default: every depth. */
  maxFieldDepth?: number;
  /** Also emit `field` for closed objects and arrays, not only for leaves. Default true. */
  containerFields?: boolean;
  /** Emit `key` for the keys of objects at depth < this. Default 0 (none). */
  keyDepth?: number;
  /** Emit `open` for values at depth <= this. Default -1 (none). */
  openDepth?: number;
  /** Deeper nesting is reported as malformed (bounds the work per emitted path). Default 256. */
  maxNesting?: number;
  /**
   * Objects at or inside these paths may not repeat a key: the repeat fails the scan at its
   * closing quote, where it becomes certain. Default none, as JSON.parse (the last one wins).
   */
  uniqueKeysUnder?: readonly JsonPath[];
}

/**
 * The scanner's states, one number line across its files: 0-5 and 17-19 here, 6-8 inside a
 * string (incremental-json-scanner.ts, which declares the same object), 9-16 in a number
 * (json-lexical-grammar.ts). An object, not the const enum it was: enums are not erasable
 * syntax, so Node's own type stripping refuses them (tsconfig: erasableSyntaxOnly). bench/parsers
 * showed no difference from the enum's inlined literals beyond the 2-core box's noise.
 */
const S = {
  /** A value must start here (leading whitespace allowed). */
  VALUE: 0,
  VALUE_OR_ARRAY_END: 1,
  KEY_OR_OBJECT_END: 2,
  KEY: 3,
  COLON: 4,
  /** "," or the enclosing container's closing bracket. */
  AFTER_VALUE: 5,
  STRING: 6,
  ESCAPE: 7,
  UNICODE: 8,
  LITERAL: 17,
  DONE: 18,
  FAILED: 19,
} as const;

interface Frame {
  isArray: boolean;
  container: Record<string, unknown> | unknown[];
  /** The key whose value is being read (objects). */
  key: string;
}

const NO_EVENTS: readonly JsonScanEvent[] = Object.freeze([]);

/**
 * The part of IncrementalJsonScanner outside strings: containers, keys, numbers and literals,
 * the values they build, the paths, and the events. Strings (where the characters of a code
 * argument go, the per-token path) are the subclass's: it is told when one begins
 * (beginString) and tells when one ends (endKey, endValue).
 */
export abstract class JsonStructureScanner {
  readonly #maxFieldDepth: number;
  readonly #containerFields: boolean;
  readonly #keyDepth: number;
  readonly #openDepth: number;
  readonly #maxNesting: number;
  readonly #uniqueKeysUnder: readonly JsonPath[];

  protected state: number = S.VALUE;
  /** Characters consumed so far. */
  protected consumed = 0;
  /** Created with its first event: a `[]` pushed onto grows to 17 slots first. */
  protected events: JsonScanEvent[] | undefined;
  readonly #stack: Frame[] = [];
  /** Path of the value being read: one entry per open container. */
  protected readonly path: JsonPath = [];
  #value: unknown = undefined;
  #error: { reason: string; at: number } | undefined;
  // The number being read, as written; the literal being matched.
  #num = '';
  #literal = '';
  #literalPos = 0;
  #literalValue: unknown = null;

  constructor(options: JsonStructureOptions) {
    this.#maxFieldDepth = options.maxFieldDepth ?? Number.POSITIVE_INFINITY;
    this.#containerFields = options.containerFields ?? true;
    this.#keyDepth = options.keyDepth ?? 0;
    this.#openDepth = options.openDepth ?? -1;
    this.#maxNesting = options.maxNesting ?? 256;
    this.#uniqueKeysUnder = options.uniqueKeysUnder ?? [];
  }

  /** Characters consumed so far; the top-level value ends here once `done`. */
  get offset(): number {
    return this.consumed;
  }

  get done(): boolean {
    return this.state === S.DONE;
  }

  get failed(): boolean {
    return this.state === S.FAILED;
  }

  /** The top-level value, once `done`. */
  get value(): unknown {
    return this.#value;
  }

  get error(): { reason: string; at: number } | undefined {
    return this.#error;
  }

  /** Whether takeEvents() has anything: most writes inside a long string produce nothing. */
  get hasEvents(): boolean {
    return this.events !== undefined;
  }

  /** Events since the last call, in order. */
  takeEvents(): readonly JsonScanEvent[] {
    const events = this.takeScanEvents();
    return events.length === 0 ? NO_EVENTS : events.map(exactShape);
  }

  /**
   * takeEvents() for the format parsers' hot path: the same events, but each object also
   * carries the other types' fields, undefined (see scanEvent), so a caller must read only the
   * fields of each event's type.
   */
  takeScanEvents(): readonly JsonScanEvent[] {
    // Most writes inside a long string produce nothing: don't allocate for them.
    const events = this.events;
    if (events === undefined) return NO_EVENTS;
    this.events = undefined;
    return events;
  }

  /** The input has ended: completes a top-level number, or reports the document as truncated. */
  end(): readonly JsonScanEvent[] {
    const state = this.state;
    if (state !== S.DONE && state !== S.FAILED) {
      if (this.#stack.length === 0 && (state === NUM_ZERO || state === NUM_INT || state === NUM_FRAC || state === NUM_EXP)) {
        this.endValue(Number(this.#num), this.consumed);
      } else {
        this.fail(state === S.VALUE && this.#stack.length === 0 ? 'no JSON value' : 'truncated JSON', this.consumed, 0);
      }
    }
    return this.takeEvents();
  }

  /** A string begins (the state becomes STRING); its opening quote has been read. */
  protected abstract beginString(isKey: boolean): void;

  /**
   * Scans `text` from `i` (`base + i` is its absolute offset) while outside strings: returns
   * where it stopped, which is `to`, just after the opening quote of a string, at the end of the
   * top-level value (`done`), or at the first impossible character (`failed`, consuming
   * nothing more; `consumed` is then set to where it failed).
   */
  protected scanStructure(text: string, i: number, to: number, base: number): number {
    while (i < to) {
      const c = text.charCodeAt(i);
      switch (this.state) {
        case S.VALUE:
        case S.VALUE_OR_ARRAY_END: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c === 93 && this.state === S.VALUE_OR_ARRAY_END) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          if (!this.#startValue(c, base + i)) return this.fail(unexpected(text[i]!, 'a value'), base + i, i);
          if (this.failed) return i;
          i += 1;
          if ((this.state as number) >= NUM_MINUS && (this.state as number) <= NUM_INT) {
            // Numbers are collected as runs of `text`: this one began at i - 1.
            this.#num = '';
            i = this.#scanNumber(text, i, to, base, i - 1);
          }
          continue;
        }
        case S.KEY_OR_OBJECT_END:
        case S.KEY: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c === 125 && this.state === S.KEY_OR_OBJECT_END) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          if (c !== 34) return this.fail(unexpected(text[i]!, 'a key'), base + i, i);
          this.beginString(true);
          return i + 1;
        }
        case S.COLON: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c !== 58) return this.fail(unexpected(text[i]!, '":"'), base + i, i);
          this.state = S.VALUE;
          i += 1;
          continue;
        }
        case S.AFTER_VALUE: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          const frame = this.#stack[this.#stack.length - 1]!;
          if (c === 44) {
            this.state = frame.isArray ? S.VALUE : S.KEY;
            if (frame.isArray) this.path[this.path.length - 1] = (this.path[this.path.length - 1] as number) + 1;
            i += 1;
            continue;
          }
          if ((c === 93 && frame.isArray) || (c === 125 && !frame.isArray)) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          return this.fail(unexpected(text[i]!, frame.isArray ? '"," or "]"' : '"," or "}"'), base + i, i);
        }
        case S.LITERAL: {
          if (text[i] !== this.#literal[this.#literalPos]) return this.fail(unexpected(text[i]!, `"${this.#literal}"`), base + i, i);
          i += 1;
          if (++this.#literalPos === this.#literal.length) this.endValue(this.#literalValue, base + i);
          continue;
        }
        case S.STRING:
        case S.ESCAPE:
        case S.UNICODE:
        case S.DONE:
        case S.FAILED:
          return i;
        default:
          // The number states (NUM_MINUS…NUM_EXP): as `default`, so that every case label is a
          // literal and the switch compiles to a jump table.
          i = this.#scanNumber(text, i, to, base, i);
          continue;
      }
    }
    return i;
  }

  /** Whether `key`, just read, repeats a key of its object where keys must be unique. */
  protected repeatsKey(key: string): boolean {
    const prefixes = this.#uniqueKeysUnder;
    if (prefixes.length === 0) return false;
    const container = this.#stack[this.#stack.length - 1]!.container;
    if (!Object.hasOwn(container, key)) return false;
    // The object's own path is this.path less its last entry, the slot of the key being read.
    const depth = this.path.length - 1;
    for (let k = 0; k < prefixes.length; k++) {
      const prefix = prefixes[k]!;
      if (prefix.length > depth) continue;
      let i = 0;
      while (i < prefix.length && prefix[i] === this.path[i]) i++;
      if (i === prefix.length) return true;
    }
    return false;
  }

  /** A key has closed at `at`. */
  protected endKey(key: string, at: number): void {
    this.#stack[this.#stack.length - 1]!.key = key;
    this.path[this.path.length - 1] = key;
    if (this.path.length - 1 < this.#keyDepth) this.emit(scanEvent('key', this.path.slice(), at, undefined, undefined, undefined, undefined, undefined));
    this.state = S.COLON;
  }

  /** A value (not a container) has closed at `at`. */
  protected endValue(value: unknown, at: number): void {
    this.#place(value, at, false);
  }

  protected emit(event: JsonScanEvent): void {
    if (this.events === undefined) this.events = [event];
    else this.events.push(event);
  }

  /** Records the failure; returns `index` so that `write` can return it. */
  protected fail(reason: string, at: number, index: number): number {
    this.state = S.FAILED;
    this.#error = { reason, at };
    this.consumed = at;
    this.emit(scanEvent('error', undefined, at, undefined, undefined, undefined, undefined, reason));
    return index;
  }

  /** Consumes number characters from text[i]; returns where it stopped (the delimiter, if any). */
  #scanNumber(text: string, i: number, to: number, base: number, runFrom: number): number {
    let state = this.state;
    while (i < to) {
      const c = text.charCodeAt(i);
      const next = nextNumberState(state, c);
      if (next === -1) return this.fail(unexpected(text[i]!, 'a digit'), base + i, i);
      if (next === -2) {
        // The number ends before this character, which the enclosing state must then accept.
        this.#num += text.slice(runFrom, i);
        this.endValue(Number(this.#num), base + i);
        this.#num = '';
        return i;
      }
      state = next;
      i += 1;
    }
    this.state = state;
    this.#num += text.slice(runFrom, i);
    return i;
  }

  /** Starts the value whose first character is `c`; false if no value starts so. */
  #startValue(c: number, at: number): boolean {
    let kind: ValueKind;
    if (c === 123 || c === 91) {
      kind = c === 123 ? 'object' : 'array';
    } else if (c === 34) {
      kind = 'string';
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      kind = 'number';
    } else if (c === 116 || c === 102 || c === 110) {
      kind = 'literal';
    } else {
      return false;
    }
    if (this.path.length <= this.#openDepth) this.emit(scanEvent('open', this.path.slice(), at, undefined, undefined, undefined, kind, undefined));
    switch (kind) {
      case 'object':
      case 'array': {
        if (this.#stack.length >= this.#maxNesting) {
          this.fail(`nested deeper than ${this.#maxNesting}`, at, 0);
          return true;
        }
        const isArray = kind === 'array';
        this.#stack.push({ isArray, container: isArray ? [] : {}, key: '' });
        this.path.push(isArray ? 0 : '');
        this.state = isArray ? S.VALUE_OR_ARRAY_END : S.KEY_OR_OBJECT_END;
        return true;
      }
      case 'string':
        this.beginString(false);
        return true;
      case 'number':
        this.state = c === 45 ? NUM_MINUS : c === 48 ? NUM_ZERO : NUM_INT;
        return true;
      case 'literal':
        this.#literal = c === 116 ? 'true' : c === 102 ? 'false' : 'null';
        this.#literalValue = c === 116 ? true : c === 102 ? false : null;
        this.#literalPos = 1;
        this.state = S.LITERAL;
        return true;
    }
  }

  #closeContainer(at: number): void {
    const frame = this.#stack.pop()!;
    this.path.pop();
    this.#place(frame.container, at, true);
  }

  #place(value: unknown, at: number, isContainer: boolean): void {
    const depth = this.path.length;
    if (depth === 0) {
      this.#value = value;
      this.state = S.DONE;
      this.emit(scanEvent('done', undefined, at, value, undefined, undefined, undefined, undefined));
      return;
    }
    if (depth <= this.#maxFieldDepth && (!isContainer || this.#containerFields)) {
      this.emit(scanEvent('field', this.path.slice(), at, value, undefined, undefined, undefined, undefined));
    }
    const frame = this.#stack[this.#stack.length - 1]!;
    if (frame.isArray) {
      (frame.container as unknown[]).push(value);
    } else if (frame.key === '__proto__') {
      // As JSON.parse does: an own property, not the prototype.
      Object.defineProperty(frame.container, '__proto__', { value, writable: true, enumerable: true, configurable: true });
    } else {
      (frame.container as Record<string, unknown>)[frame.key] = value;
    }
    this.state = S.AFTER_VALUE;
  }
}

export function unexpected(ch: string, expected: string): string {
  return `unexpected ${JSON.stringify(ch)}, expected ${expected}`;
}
