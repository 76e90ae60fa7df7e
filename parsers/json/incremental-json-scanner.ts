/**
 * A push-based JSON scanner (RFC 8259) that reports each value the moment it closes.
 *
 * Every character is looked at exactly once, whatever the split into `write` calls, so the cost
 * is O(n) over a whole stream: nothing is re-parsed, and partial JSON is never "auto-completed".
 * Each event carries `at`, the absolute offset (characters since the scanner started) at which it
 * became certain, so a caller can place it exactly in the raw text:
 * - a string, `true`/`false`/`null`, an object or an array is certain after its last character;
 * - a number only once the character after it arrives (`1` may still become `12`): `at` is the
 *   offset of that delimiter, which is not consumed by the number; a top-level number is complete
 *   only at `end()`;
 * - a malformed document fails at the first character no valid JSON could have there, and `at`
 *   is that character's offset.
 * The scanner stops at the end of the top-level value (`done`) and consumes nothing after it, so
 * a format parser can see where an arguments object ends and what follows.
 */

import { knownString } from '../known-string.ts';
import type { JsonPath, JsonScanEvent } from './json-scan-event.ts';
import { decodeEscape, hexValue, isWhitespace, nextNumberState, NUM_E, NUM_E_SIGN, NUM_EXP, NUM_DOT, NUM_FRAC, NUM_INT, NUM_MINUS, NUM_ZERO } from './json-lexical-grammar.ts';

export type { JsonPath, JsonScanEvent } from './json-scan-event.ts';

export interface IncrementalJsonScannerOptions {
  /** Emit `field` for values with 1 <= depth <= this (depth = path length). Default: every depth. */
  maxFieldDepth?: number;
  /** Also emit `field` for closed objects and arrays, not only for leaves. Default true. */
  containerFields?: boolean;
  /** Emit `key` for the keys of objects at depth < this. Default 0 (none). */
  keyDepth?: number;
  /** Emit `open` for values at depth <= this. Default -1 (none). */
  openDepth?: number;
  /** Strings at exactly these paths are also streamed as `line` events. */
  linePaths?: readonly JsonPath[];
  /** Stream every string value as `fragment` events too. Default false. */
  fragments?: boolean;
  /** Deeper nesting is reported as malformed (bounds the work per emitted path). Default 256. */
  maxNesting?: number;
}

// States. Plain numbers rather than an enum: the hot loop switches on them.
const VALUE = 0; // a value must start here (leading whitespace allowed)
const VALUE_OR_ARRAY_END = 1;
const KEY_OR_OBJECT_END = 2;
const KEY = 3;
const COLON = 4;
const AFTER_VALUE = 5; // ',' or the enclosing container's closing bracket
const STRING = 6;
const ESCAPE = 7;
const UNICODE = 8;
// 9-16: the number states of json-lexical-grammar.ts.
const LITERAL = 17;
const DONE = 18;
const FAILED = 19;

interface Frame {
  isArray: boolean;
  container: Record<string, unknown> | unknown[];
  /** The key whose value is being read (objects). */
  key: string;
}

const NO_EVENTS: readonly JsonScanEvent[] = Object.freeze([]);


export class IncrementalJsonScanner {
  readonly #maxFieldDepth: number;
  readonly #containerFields: boolean;
  readonly #keyDepth: number;
  readonly #openDepth: number;
  readonly #linePaths: readonly JsonPath[];
  readonly #fragments: boolean;
  readonly #maxNesting: number;

  #state = VALUE;
  /** Characters consumed so far. */
  #offset = 0;
  /** Created with its first event: a `[]` pushed onto grows to 17 slots first. */
  #events: JsonScanEvent[] | undefined;
  readonly #stack: Frame[] = [];
  /** Path of the value being read: one entry per open container. */
  readonly #path: JsonPath = [];
  #value: unknown = undefined;
  #error: { reason: string; at: number } | undefined;

  // The string being read (a key or a value), decoded. In line mode, only its completed lines:
  // the current line is in #line, so each run is appended once, not twice.
  #str = '';
  #isKey = false;
  #unicode = 0;
  #unicodeDigits = 0;
  #lineMode = false;
  /** In line mode, the string's path: shared by its line events, which only read it. */
  #linePath: JsonPath = [];
  #line = '';
  #lineNo = 0;
  /** Length of #str already reported as fragments. */
  #fragmentFrom = 0;
  // The number being read, as written.
  #num = '';
  #literal = '';
  #literalPos = 0;
  #literalValue: unknown = null;

  constructor(options: IncrementalJsonScannerOptions = {}) {
    this.#maxFieldDepth = options.maxFieldDepth ?? Number.POSITIVE_INFINITY;
    this.#containerFields = options.containerFields ?? true;
    this.#keyDepth = options.keyDepth ?? 0;
    this.#openDepth = options.openDepth ?? -1;
    this.#linePaths = options.linePaths ?? [];
    this.#fragments = !!(options.fragments ?? false);
    this.#maxNesting = options.maxNesting ?? 256;
  }

  /** Characters consumed so far; the top-level value ends here once `done`. */
  get offset(): number {
    return this.#offset;
  }

  get done(): boolean {
    return this.#state === DONE;
  }

  get failed(): boolean {
    return this.#state === FAILED;
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
    return this.#events !== undefined;
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
    const events = this.#events;
    if (events === undefined) return NO_EVENTS;
    this.#events = undefined;
    return events;
  }

  /**
   * Scans `text[from, to)` and returns the index where it stopped: `to`, or just after the
   * top-level value (`done`), or at the first impossible character (`failed`). Consumes nothing
   * once done or failed.
   */
  write(text: string, from = 0, to = text.length): number {
    // Fast path for the commonest write, a token inside a long string value (a code argument):
    // a run with no quote, backslash or control character is appended without entering the
    // state machine. Kept small so that V8 inlines it into the callers' loops.
    if (this.#state === STRING && this.#fragments === false) {
      text = knownString(text);
      let i = from;
      while (i < to) {
        const c = text.charCodeAt(i);
        if (c === 34 || c === 92 || c < 32) break;
        i += 1;
      }
      if (i > from) {
        this.#appendRun(from === 0 && i === text.length ? text : text.slice(from, i));
        this.#offset += i - from;
      }
      if (i === to) return to;
      from = i;
    }
    return this.#scan(text, from, to);
  }

  /**
   * The whole of `text`, if the scanner is inside a string (or just after its backslash) and
   * `text` does not end it: no quote, control character or `\u` escape. Then it is appended
   * (escapes decoded, a line event for each `\n` of a line-streamed string) and the result is
   * true; otherwise nothing is consumed, false. The fused path for a delta inside a long
   * string, cheaper than a `write` through the callers.
   */
  writePlain(text: string): boolean {
    // `=== true` on the flags and on #writeEscaped's answer: a comparison V8 compiles to one
    // instruction, where a plain truthiness test of a value it has no type for is a dozen.
    if (this.#state !== STRING) return this.#state === ESCAPE && this.#writeEscaped(text, 0) === true;
    text = '' + text; // knownString, written out (see FormatParser.push)
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 34 || c === 92 || c < 32) return c === 92 && this.#writeEscaped(text, i) === true;
    }
    if (this.#fragments === true) return false;
    // Raw "\n" cannot occur in a JSON string, so a run never completes a line.
    if (this.#lineMode === true) this.#line += text;
    else this.#str += text;
    this.#offset += n;
    return true;
  }

  /**
   * writePlain's rarer half: `text[from]` is a backslash, or the character after one. Decodes
   * in one pass; if something turns out to need the state machine, everything it did is undone
   * (the strings are immutable, so that is a matter of putting back the old ones).
   */
  #writeEscaped(text: string, from: number): boolean {
    if (this.#fragments === true) return false;
    text = knownString(text);
    const n = text.length;
    const state0 = this.#state;
    // The commonest case: a token that is just the backslash.
    if (from === n - 1 && state0 === STRING) {
      if (from > 0) this.#appendRun(text.slice(0, from));
      this.#state = ESCAPE;
      this.#offset += n;
      return true;
    }
    const str0 = this.#str;
    const line0 = this.#line;
    const lineNo0 = this.#lineNo;
    const events0 = this.#events;
    const eventCount0 = events0 === undefined ? 0 : events0.length;
    const base = this.#offset;
    let state = state0;
    let runFrom = 0;
    for (let i = from; i < n; i++) {
      const c = text.charCodeAt(i);
      if (state === ESCAPE) {
        const decoded = decodeEscape(c);
        if (decoded === undefined) return this.#undoEscaped(str0, line0, lineNo0, events0, eventCount0);
        this.#appendDecoded(decoded, base + i + 1);
        state = STRING;
        runFrom = i + 1;
      } else if (c === 92) {
        if (i > runFrom) this.#appendRun(text.slice(runFrom, i));
        state = ESCAPE;
      } else if (c === 34 || c < 32) {
        return this.#undoEscaped(str0, line0, lineNo0, events0, eventCount0);
      }
    }
    if (state === STRING && n > runFrom) this.#appendRun(runFrom === 0 ? text : text.slice(runFrom, n));
    this.#state = state;
    this.#offset = base + n;
    return true;
  }

  /** Puts back what #writeEscaped changed (it sets #state and #offset only on success); false. */
  #undoEscaped(str: string, line: string, lineNo: number, events: JsonScanEvent[] | undefined, eventCount: number): boolean {
    this.#str = str;
    this.#line = line;
    this.#lineNo = lineNo;
    if (events === undefined) this.#events = undefined;
    else events.length = eventCount;
    return false;
  }

  #scan(text: string, from: number, to: number): number {
    text = knownString(text);
    let i = from;
    // Absolute offset of text[i] is base + i.
    const base = this.#offset - from;
    scan: while (i < to) {
      let c = text.charCodeAt(i);
      switch (this.#state) {
        case STRING: {
          const runFrom = i;
          while (c !== 34 && c !== 92 && c >= 32) {
            if (++i === to) break;
            c = text.charCodeAt(i);
          }
          if (i > runFrom) this.#appendRun(text.slice(runFrom, i));
          if (i === to) break scan;
          if (c === 34) {
            i += 1;
            this.#endString(base + i);
          } else if (c === 92) {
            this.#state = ESCAPE;
            i += 1;
          } else {
            return this.#fail('control character in string', base + i, i);
          }
          continue;
        }
        case ESCAPE: {
          if (c === 117) {
            this.#state = UNICODE;
            this.#unicode = 0;
            this.#unicodeDigits = 0;
          } else {
            const decoded = decodeEscape(c);
            if (decoded === undefined) return this.#fail(`invalid escape "\\${text[i]!}"`, base + i, i);
            this.#state = STRING;
            this.#appendDecoded(decoded, base + i + 1);
          }
          i += 1;
          continue;
        }
        case UNICODE: {
          const digit = hexValue(c);
          if (digit < 0) return this.#fail('invalid \\u escape', base + i, i);
          this.#unicode = this.#unicode * 16 + digit;
          i += 1;
          if (++this.#unicodeDigits === 4) {
            this.#state = STRING;
            // Surrogate pairs need no pairing here: two escaped halves concatenate into the pair.
            this.#appendDecoded(String.fromCharCode(this.#unicode), base + i);
          }
          continue;
        }
        case VALUE:
        case VALUE_OR_ARRAY_END: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c === 93 && this.#state === VALUE_OR_ARRAY_END) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          if (!this.#startValue(c, base + i)) return this.#fail(unexpected(text[i]!, 'a value'), base + i, i);
          if (this.failed) return i;
          i += 1;
          if ((this.#state as number) >= NUM_MINUS && (this.#state as number) <= NUM_INT) {
            // Numbers are collected as runs of `text`: this one began at i - 1.
            this.#num = '';
            i = this.#scanNumber(text, i, to, base, i - 1);
            if (this.failed) return i;
          }
          continue;
        }
        case KEY_OR_OBJECT_END:
        case KEY: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c === 125 && this.#state === KEY_OR_OBJECT_END) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          if (c !== 34) return this.#fail(unexpected(text[i]!, 'a key'), base + i, i);
          this.#beginString(true);
          i += 1;
          continue;
        }
        case COLON: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          if (c !== 58) return this.#fail(unexpected(text[i]!, '":"'), base + i, i);
          this.#state = VALUE;
          i += 1;
          continue;
        }
        case AFTER_VALUE: {
          if (isWhitespace(c)) {
            i += 1;
            continue;
          }
          const frame = this.#stack[this.#stack.length - 1]!;
          if (c === 44) {
            this.#state = frame.isArray ? VALUE : KEY;
            if (frame.isArray) this.#path[this.#path.length - 1] = (this.#path[this.#path.length - 1] as number) + 1;
            i += 1;
            continue;
          }
          if ((c === 93 && frame.isArray) || (c === 125 && !frame.isArray)) {
            i += 1;
            this.#closeContainer(base + i);
            continue;
          }
          return this.#fail(unexpected(text[i]!, frame.isArray ? '"," or "]"' : '"," or "}"'), base + i, i);
        }
        case NUM_MINUS:
        case NUM_ZERO:
        case NUM_INT:
        case NUM_DOT:
        case NUM_FRAC:
        case NUM_E:
        case NUM_E_SIGN:
        case NUM_EXP: {
          i = this.#scanNumber(text, i, to, base, i);
          if (this.failed) return i;
          continue;
        }
        case LITERAL: {
          if (text[i] !== this.#literal[this.#literalPos]) return this.#fail(unexpected(text[i]!, `"${this.#literal}"`), base + i, i);
          i += 1;
          if (++this.#literalPos === this.#literal.length) this.#endValue(this.#literalValue, base + i);
          continue;
        }
        case DONE:
        case FAILED:
          break scan;
      }
    }
    this.#offset = base + i;
    if (this.#fragments && (this.#state === STRING || this.#state === ESCAPE || this.#state === UNICODE)) this.#emitFragment(base + i, true);
    return i;
  }

  /** The input has ended: completes a top-level number, or reports the document as truncated. */
  end(): readonly JsonScanEvent[] {
    const state = this.#state;
    if (state !== DONE && state !== FAILED) {
      if (this.#stack.length === 0 && (state === NUM_ZERO || state === NUM_INT || state === NUM_FRAC || state === NUM_EXP)) {
        this.#endValue(Number(this.#num), this.#offset);
      } else {
        this.#fail(state === VALUE && this.#stack.length === 0 ? 'no JSON value' : 'truncated JSON', this.#offset, 0);
      }
    }
    return this.takeEvents();
  }

  /** Consumes number characters from text[i]; returns where it stopped (the delimiter, if any). */
  #scanNumber(text: string, i: number, to: number, base: number, runFrom: number): number {
    let state = this.#state;
    while (i < to) {
      const c = text.charCodeAt(i);
      const next = nextNumberState(state, c);
      if (next === -1) return this.#fail(unexpected(text[i]!, 'a digit'), base + i, i);
      if (next === -2) {
        // The number ends before this character, which the enclosing state must then accept.
        this.#num += text.slice(runFrom, i);
        this.#endValue(Number(this.#num), base + i);
        this.#num = '';
        return i;
      }
      state = next;
      i += 1;
    }
    this.#state = state;
    this.#num += text.slice(runFrom, i);
    return i;
  }

  /** Starts the value whose first character is `c`; false if no value starts so. */
  #startValue(c: number, at: number): boolean {
    let kind: 'object' | 'array' | 'string' | 'number' | 'literal';
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
    if (this.#path.length <= this.#openDepth) this.#emit(scanEvent('open', this.#path.slice(), at, undefined, undefined, undefined, kind, undefined));
    switch (kind) {
      case 'object':
      case 'array': {
        if (this.#stack.length >= this.#maxNesting) {
          this.#fail(`nested deeper than ${this.#maxNesting}`, at, 0);
          return true;
        }
        const isArray = kind === 'array';
        this.#stack.push({ isArray, container: isArray ? [] : {}, key: '' });
        this.#path.push(isArray ? 0 : '');
        this.#state = isArray ? VALUE_OR_ARRAY_END : KEY_OR_OBJECT_END;
        return true;
      }
      case 'string':
        this.#beginString(false);
        return true;
      case 'number':
        this.#state = c === 45 ? NUM_MINUS : c === 48 ? NUM_ZERO : NUM_INT;
        return true;
      case 'literal':
        this.#literal = c === 116 ? 'true' : c === 102 ? 'false' : 'null';
        this.#literalValue = c === 116 ? true : c === 102 ? false : null;
        this.#literalPos = 1;
        this.#state = LITERAL;
        return true;
    }
  }

  #beginString(isKey: boolean): void {
    this.#state = STRING;
    this.#isKey = isKey;
    this.#str = '';
    this.#fragmentFrom = 0;
    this.#lineMode = !isKey && this.#linePaths.length > 0 && this.#isLinePath();
    if (this.#lineMode) this.#linePath = this.#path.slice();
    this.#line = '';
    this.#lineNo = 0;
  }

  /** Whether the current path is one of `linePaths` (a loop: no closure per string). */
  #isLinePath(): boolean {
    const linePaths = this.#linePaths;
    for (let k = 0; k < linePaths.length; k++) if (pathEquals(linePaths[k]!, this.#path)) return true;
    return false;
  }

  #appendRun(run: string): void {
    // Raw "\n" cannot occur in a JSON string, so a run never completes a line.
    if (this.#lineMode === true) this.#line += run;
    else this.#str += run;
  }

  #appendDecoded(ch: string, at: number): void {
    if (!this.#lineMode) {
      this.#str += ch;
      return;
    }
    this.#line += ch;
    if (ch === '\n') {
      this.#lineNo += 1;
      this.#emit(scanEvent('line', this.#linePath, at, undefined, this.#line, this.#lineNo, undefined, undefined));
      this.#str += this.#line;
      this.#line = '';
    }
  }

  /** The string read so far, decoded. */
  #current(): string {
    return this.#lineMode ? this.#str + this.#line : this.#str;
  }

  #endString(at: number): void {
    const str = this.#current();
    this.#str = '';
    if (this.#isKey) {
      const frame = this.#stack[this.#stack.length - 1]!;
      frame.key = str;
      this.#path[this.#path.length - 1] = str;
      if (this.#path.length - 1 < this.#keyDepth) this.#emit(scanEvent('key', this.#path.slice(), at, undefined, undefined, undefined, undefined, undefined));
      this.#state = COLON;
      return;
    }
    this.#emitFragment(at, false, str);
    if (this.#lineMode && this.#line.length > 0) {
      this.#lineNo += 1;
      this.#emit(scanEvent('line', this.#linePath, at, undefined, this.#line, this.#lineNo, undefined, undefined));
    }
    this.#lineMode = false;
    this.#line = '';
    this.#endValue(str, at);
  }

  #emitFragment(at: number, partial: boolean, str = this.#current()): void {
    if (!this.#fragments || this.#isKey) return;
    let until = str.length;
    // Never end a partial fragment between the halves of a surrogate pair.
    if (partial && until > this.#fragmentFrom && isHighSurrogate(str.charCodeAt(until - 1))) until -= 1;
    if (until <= this.#fragmentFrom) return;
    this.#emit(scanEvent('fragment', this.#path.slice(), at, undefined, str.slice(this.#fragmentFrom, until), undefined, undefined, undefined));
    this.#fragmentFrom = until;
  }

  /** A value (not a container) has closed at `at`. */
  #endValue(value: unknown, at: number): void {
    this.#place(value, at, false);
  }

  #closeContainer(at: number): void {
    const frame = this.#stack.pop()!;
    this.#path.pop();
    this.#place(frame.container, at, true);
  }

  #place(value: unknown, at: number, isContainer: boolean): void {
    const depth = this.#path.length;
    if (depth === 0) {
      this.#value = value;
      this.#state = DONE;
      this.#emit(scanEvent('done', undefined, at, value, undefined, undefined, undefined, undefined));
      return;
    }
    if (depth <= this.#maxFieldDepth && (!isContainer || this.#containerFields)) {
      this.#emit(scanEvent('field', this.#path.slice(), at, value, undefined, undefined, undefined, undefined));
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
    this.#state = AFTER_VALUE;
  }

  #emit(event: JsonScanEvent): void {
    if (this.#events === undefined) this.#events = [event];
    else this.#events.push(event);
  }

  /** Records the failure; returns `index` so that `write` can return it. */
  #fail(reason: string, at: number, index: number): number {
    this.#state = FAILED;
    this.#error = { reason, at };
    this.#offset = at;
    this.#emit(scanEvent('error', undefined, at, undefined, undefined, undefined, undefined, reason));
    return index;
  }
}

/**
 * Every event is made with all the fields (those its type does not use are undefined), so that
 * all have one shape: the format parsers' `switch (e.type)` and `e.at` stay monomorphic loads
 * instead of megamorphic ones over seven shapes. takeEvents() hands out the exact shapes.
 */
function scanEvent(
  type: JsonScanEvent['type'],
  path: JsonPath | undefined,
  at: number,
  value: unknown,
  text: string | undefined,
  lineNo: number | undefined,
  kind: 'object' | 'array' | 'string' | 'number' | 'literal' | undefined,
  reason: string | undefined,
): JsonScanEvent {
  return { type, path, at, value, text, lineNo, kind, reason } as JsonScanEvent;
}

/** The event with only its type's fields, as JsonScanEvent declares it. */
function exactShape(e: JsonScanEvent): JsonScanEvent {
  switch (e.type) {
    case 'key':
      return { type: 'key', path: e.path, at: e.at };
    case 'open':
      return { type: 'open', path: e.path, kind: e.kind, at: e.at };
    case 'field':
      return { type: 'field', path: e.path, value: e.value, at: e.at };
    case 'line':
      return { type: 'line', path: e.path, text: e.text, lineNo: e.lineNo, at: e.at };
    case 'fragment':
      return { type: 'fragment', path: e.path, text: e.text, at: e.at };
    case 'done':
      return { type: 'done', value: e.value, at: e.at };
    case 'error':
      return { type: 'error', reason: e.reason, at: e.at };
  }
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function pathEquals(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function unexpected(ch: string, expected: string): string {
  return `unexpected ${JSON.stringify(ch)}, expected ${expected}`;
}
