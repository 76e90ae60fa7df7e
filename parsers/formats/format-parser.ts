import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { searchMarkers } from '../marker-search.ts';
import { knownString } from '../known-string.ts';
import { EventList } from './event-list.ts';

/**
 * The push/end loop every tool-call format shares. A format is a state machine whose `step`
 * consumes `buf` from `i` and returns where it stopped; when it cannot decide yet (a marker may
 * be cut in two), it `hold`s the rest, which comes back in front of the next delta. Held text is
 * always short (a partial marker or header), so each character is still scanned O(1) times.
 */
export abstract class FormatParser implements ToolCallParser {
  #pending = '';
  /** Reused across pushes: between them it holds only the carried half character, if any. */
  readonly #out = new EventList();
  #ended = false;

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    const out = this.#out;
    if (this.#pending === '') {
      const callId = this.pushPlain(delta, out);
      if (callId !== undefined) {
        // The commonest push: one token inside a string argument, which is just the next
        // `call-args` fragment. Built directly, without the event list, unless a half character
        // is carried in or out (the list's business).
        if (callId !== '' && out.empty) {
          if (delta.length === 0) return [];
          const last = delta.charCodeAt(delta.length - 1);
          if (last < 0xd800 || last > 0xdbff) return [{ type: 'call-args', callId, text: delta }];
        }
        if (callId !== '') out.args(callId, delta);
        return out.take(out.takeCarry());
      }
    }
    // `+` rather than a conditional: adding "" returns delta itself, and the result is typed as a
    // string for the optimiser (see known-string.ts).
    const buf = this.#pending + delta;
    this.#pending = '';
    let i = 0;
    while (i < buf.length) i = this.step(buf, i, out);
    return out.take(out.takeCarry());
  }

  end(): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    const out = this.#out;
    const pending = this.#pending;
    this.#pending = '';
    this.finish(pending, out);
    return out.take();
  }

  /** Consumes `buf` from `i` (at least one character, or a change of state); returns the new index. */
  protected abstract step(buf: string, i: number, out: EventList): number;

  /**
   * A format may consume a whole delta on a fused fast path (the commonest case: a token inside
   * a JSON string value): it returns a call's id when the delta is just that call's next
   * `call-args` fragment (emitted by `push`), or '' when it put the delta's events, if any, in
   * `out`. undefined leaves the delta to `step`, nothing consumed.
   */
  protected pushPlain(_delta: string, _out: EventList): string | undefined {
    return undefined;
  }

  /** The stream has ended; `pending` is what the current state held. */
  protected abstract finish(pending: string, out: EventList): void;

  /** Keeps `buf[i..]` for the next push; returns `buf.length`. */
  protected hold(buf: string, i: number): number {
    this.#pending = buf.slice(i);
    return buf.length;
  }

  /**
   * Emits `buf[i..]` up to the earliest complete marker through `emit` (as text to `out` if
   * `emit` is undefined: no closure to allocate on the commonest path), and returns that marker
   * and the index after it. Without one, emits all but a possible partial marker at the end,
   * holds that, and returns undefined.
   */
  protected scanFor(buf: string, i: number, markers: readonly string[], emit: ((text: string) => void) | undefined, out?: EventList): { marker: string; next: number } | undefined {
    buf = knownString(buf);
    const rest = i === 0 ? buf : buf.slice(i);
    // Fast path for most deltas of prose: where no marker's first character occurs, there is
    // neither a marker nor the start of one.
    let candidate = false;
    for (let k = 0; k < markers.length; k++) {
      if (rest.indexOf(markers[k]![0]!) !== -1) {
        candidate = true;
        break;
      }
    }
    if (!candidate) {
      if (emit === undefined) out!.text(rest);
      else emit(rest);
      return undefined;
    }
    const found = searchMarkers(rest, markers);
    const before = rest.slice(0, found.found ? found.index : found.holdFrom);
    if (emit === undefined) out!.text(before);
    else emit(before);
    if (found.found) return { marker: found.marker, next: i + found.index + found.marker.length };
    this.hold(buf, i + found.holdFrom);
    return undefined;
  }
}

/** Index of the first non-whitespace character of buf at or after i (buf.length if none). */
export function skipWhitespace(buf: string, i: number): number {
  buf = knownString(buf);
  while (i < buf.length) {
    const c = buf.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    i += 1;
  }
  return i;
}

/** How `buf[i..]` stands against `literal`: it starts with it, is cut inside it, or differs. */
export function matchLiteral(buf: string, i: number, literal: string): 'full' | 'partial' | 'none' {
  buf = knownString(buf);
  const n = Math.min(literal.length, buf.length - i);
  for (let k = 0; k < n; k++) if (buf.charCodeAt(i + k) !== literal.charCodeAt(k)) return 'none';
  return n === literal.length ? 'full' : 'partial';
}

/**
 * The raw text of a frame or call so far, released as text if it never becomes a valid call.
 * One `+=` per delta: V8 makes that a cons string (one small young allocation), which measured
 * cheaper than pushing the delta onto a growing array (bench/parsers).
 */
export class RawText {
  #text: string;

  constructor(first = '') {
    this.#text = first;
  }

  add(text: string): void {
    this.#text += text;
  }

  get text(): string {
    return this.#text;
  }
}
