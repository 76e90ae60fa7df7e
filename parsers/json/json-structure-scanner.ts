import type { JsonScanEvent, ValueKind } from './json-scan-event.ts';
import { isWhitespace, nextNumberState, NUM_EXP, NUM_FRAC, NUM_INT, NUM_MINUS, NUM_ZERO } from './json-lexical-grammar.ts';
import { jsonNumberValue } from './json-number-value.ts';
import { JsonValueAssembler } from './json-value-assembler.ts';

export type { JsonStructureOptions } from './json-value-assembler.ts';

/**
 * The scanner's states, one number line across its files: 0-5 and 17-19 here, 6-8 inside a
 * string (incremental-json-scanner.ts and json-string-builder.ts), 9-16 in a number
 * (json-lexical-grammar.ts); the other files declare the ones they use, with these numbers. An
 * object, not the const enum it was: enums are not erasable syntax, so Node's own type stripping
 * refuses them (tsconfig: erasableSyntaxOnly). bench/parsers showed no difference from the
 * enum's inlined literals beyond the 2-core box's noise.
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

/**
 * The part of IncrementalJsonScanner that reads the characters outside strings: containers,
 * keys, numbers and literals (JsonValueAssembler builds the values, paths and events from what
 * it reads). Strings (where the characters of a code argument go, the per-token path) are the
 * subclasses': they are told when one begins (beginString) and tell when one ends (endKey,
 * endValue).
 */
export abstract class JsonStructureScanner extends JsonValueAssembler {
  // The number being read, as written; the literal being matched.
  #num = '';
  #literal = '';
  #literalPos = 0;
  #literalValue: unknown = null;

  /** The input has ended: completes a top-level number, or reports the document as truncated. */
  end(): readonly JsonScanEvent[] {
    const state = this.state;
    if (state !== S.DONE && state !== S.FAILED) {
      if (this.nesting === 0 && (state === NUM_ZERO || state === NUM_INT || state === NUM_FRAC || state === NUM_EXP)) {
        this.endValue(jsonNumberValue(this.#num), this.consumed);
      } else {
        this.fail(state === S.VALUE && this.nesting === 0 ? 'no JSON value' : 'truncated JSON', this.consumed, 0);
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
            this.closeContainer(base + i);
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
            this.closeContainer(base + i);
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
          const isArray = this.inArray;
          if (c === 44) {
            this.state = isArray ? S.VALUE : S.KEY;
            if (isArray) this.path[this.path.length - 1] = (this.path[this.path.length - 1] as number) + 1;
            i += 1;
            continue;
          }
          if ((c === 93 && isArray) || (c === 125 && !isArray)) {
            i += 1;
            this.closeContainer(base + i);
            continue;
          }
          return this.fail(unexpected(text[i]!, isArray ? '"," or "]"' : '"," or "}"'), base + i, i);
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
        this.endValue(jsonNumberValue(this.#num), base + i);
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
    this.startsValue(kind, at);
    switch (kind) {
      case 'object':
      case 'array':
        this.openContainer(kind === 'array', at);
        return true;
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
}

export function unexpected(ch: string, expected: string): string {
  return `unexpected ${JSON.stringify(ch)}, expected ${expected}`;
}
