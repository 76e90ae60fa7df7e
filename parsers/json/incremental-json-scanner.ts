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
import { decodeEscape, hexValue } from './json-lexical-grammar.ts';
import type { JsonScanEvent } from './json-scan-event.ts';
import { JsonStringBuilder, type JsonStringOptions } from './json-string-builder.ts';

export type { JsonPath, JsonScanEvent } from './json-scan-event.ts';

/** What to report (JsonStructureOptions) and which strings to stream (JsonStringOptions). */
export interface IncrementalJsonScannerOptions extends JsonStringOptions {}

/** The states, numbered as in json-structure-scanner.ts (see there); strings are this file's. */
const S = {
  STRING: 6,
  ESCAPE: 7,
  UNICODE: 8,
  DONE: 18,
  FAILED: 19,
} as const;

/**
 * The scanner: JsonStructureScanner reads everything outside strings, JsonValueAssembler builds
 * the values and events, JsonStringBuilder the strings and their lines and fragments; this class
 * reads the characters of strings (escapes included) and has the per-token fast paths into them.
 */
export class IncrementalJsonScanner extends JsonStringBuilder {
  // The `\uXXXX` escape being read: its value so far, and how many hex digits it has had.
  #unicode = 0;
  #unicodeDigits = 0;

  constructor(options: IncrementalJsonScannerOptions = {}) {
    super(options);
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
    if (this.state === S.STRING && this.fragments === false) {
      text = knownString(text);
      let i = from;
      while (i < to) {
        const c = text.charCodeAt(i);
        if (c === 34 || c === 92 || c < 32) break;
        i += 1;
      }
      if (i > from) {
        this.appendRun(from === 0 && i === text.length ? text : text.slice(from, i));
        this.consumed += i - from;
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
    if (this.state !== S.STRING) return this.state === S.ESCAPE && this.#writeEscaped(text, 0) === true;
    text = '' + text; // knownString, written out (see FormatParser.push)
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 34 || c === 92 || c < 32) return c === 92 && this.#writeEscaped(text, i) === true;
    }
    if (this.fragments === true) return false;
    // Raw "\n" cannot occur in a JSON string, so a run never completes a line.
    if (this.lineMode === true) this.line += text;
    else this.str += text;
    this.consumed += n;
    return true;
  }

  /**
   * writePlain's rarer half: `text[from]` is a backslash, or the character after one. Decodes
   * in one pass; if something turns out to need the state machine, everything it did is undone
   * (the strings are immutable, so that is a matter of putting back the old ones).
   */
  #writeEscaped(text: string, from: number): boolean {
    if (this.fragments === true) return false;
    text = knownString(text);
    const n = text.length;
    const state0 = this.state;
    // The commonest case: a token that is just the backslash.
    if (from === n - 1 && state0 === S.STRING) {
      if (from > 0) this.appendRun(text.slice(0, from));
      this.state = S.ESCAPE;
      this.consumed += n;
      return true;
    }
    // The next commonest: one escape, then plain text to the end of the token ("n" or "n    "
    // after a lone backslash, `\"`): nothing after the escape can fail, so there is nothing to
    // undo and no need to keep the old state.
    const escaped = state0 === S.ESCAPE ? from : from + 1;
    let rest = escaped + 1;
    while (rest < n) {
      const c = text.charCodeAt(rest);
      if (c === 34 || c === 92 || c < 32) break;
      rest += 1;
    }
    if (rest === n) {
      const decoded = decodeEscape(text.charCodeAt(escaped));
      if (decoded === undefined) return false;
      if (from > 0) this.appendRun(text.slice(0, from));
      this.appendDecoded(decoded, this.consumed + escaped + 1);
      if (escaped + 1 < n) this.appendRun(text.slice(escaped + 1));
      this.state = S.STRING;
      this.consumed += n;
      return true;
    }
    const str0 = this.str;
    const line0 = this.line;
    const lineNo0 = this.lineNo;
    const events0 = this.events;
    const eventCount0 = events0 === undefined ? 0 : events0.length;
    const base = this.consumed;
    let state = state0;
    let runFrom = 0;
    for (let i = from; i < n; i++) {
      const c = text.charCodeAt(i);
      if (state === S.ESCAPE) {
        const decoded = decodeEscape(c);
        if (decoded === undefined) return this.#undoEscaped(str0, line0, lineNo0, events0, eventCount0);
        this.appendDecoded(decoded, base + i + 1);
        state = S.STRING;
        runFrom = i + 1;
      } else if (c === 92) {
        if (i > runFrom) this.appendRun(text.slice(runFrom, i));
        state = S.ESCAPE;
      } else if (c === 34 || c < 32) {
        return this.#undoEscaped(str0, line0, lineNo0, events0, eventCount0);
      }
    }
    if (state === S.STRING && n > runFrom) this.appendRun(runFrom === 0 ? text : text.slice(runFrom, n));
    this.state = state;
    this.consumed = base + n;
    return true;
  }

  /** Puts back what #writeEscaped changed (it sets `state` and `consumed` only on success); false. */
  #undoEscaped(str: string, line: string, lineNo: number, events: JsonScanEvent[] | undefined, eventCount: number): boolean {
    this.str = str;
    this.line = line;
    this.lineNo = lineNo;
    if (events === undefined) this.events = undefined;
    else events.length = eventCount;
    return false;
  }

  #scan(text: string, from: number, to: number): number {
    text = knownString(text);
    let i = from;
    // Absolute offset of text[i] is base + i.
    const base = this.consumed - from;
    while (i < to) {
      const state = this.state;
      if (state === S.STRING) {
        const runFrom = i;
        let c = text.charCodeAt(i);
        while (c !== 34 && c !== 92 && c >= 32) {
          if (++i === to) break;
          c = text.charCodeAt(i);
        }
        if (i > runFrom) this.appendRun(text.slice(runFrom, i));
        if (i === to) break;
        if (c === 34) {
          if (this.isKey && this.repeatsKey(this.current())) return this.fail(`duplicate key ${JSON.stringify(this.current())}`, base + i, i);
          i += 1;
          this.endString(base + i);
        } else if (c === 92) {
          this.state = S.ESCAPE;
          i += 1;
        } else {
          return this.fail('control character in string', base + i, i);
        }
      } else if (state === S.ESCAPE) {
        const c = text.charCodeAt(i);
        if (c === 117) {
          this.state = S.UNICODE;
          this.#unicode = 0;
          this.#unicodeDigits = 0;
        } else {
          const decoded = decodeEscape(c);
          if (decoded === undefined) return this.fail(`invalid escape "\\${text[i]!}"`, base + i, i);
          this.state = S.STRING;
          this.appendDecoded(decoded, base + i + 1);
        }
        i += 1;
      } else if (state === S.UNICODE) {
        const digit = hexValue(text.charCodeAt(i));
        if (digit < 0) return this.fail('invalid \\u escape', base + i, i);
        this.#unicode = this.#unicode * 16 + digit;
        i += 1;
        if (++this.#unicodeDigits === 4) {
          this.state = S.STRING;
          // Surrogate pairs need no pairing here: two escaped halves concatenate into the pair.
          this.appendDecoded(String.fromCharCode(this.#unicode), base + i);
        }
      } else if (state === S.DONE) {
        break;
      } else {
        i = this.scanStructure(text, i, to, base);
        if (this.state === S.FAILED) return i;
      }
    }
    this.consumed = base + i;
    if (this.fragments && (this.state === S.STRING || this.state === S.ESCAPE || this.state === S.UNICODE)) this.emitFragment(base + i, true);
    return i;
  }
}
