import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { LONG_TEXT, searchMarkers, type MarkerSet } from '../marker-search.ts';
import { knownString } from '../known-string.ts';
import { EventList } from './event-list.ts';
import { LeadingWhitespace } from './leading-whitespace.ts';
import type { LaneTarget, PlainWriter } from './plain-lane.ts';

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
  readonly #leading = new LeadingWhitespace();
  #ended = false;
  /**
   * The markers `#pending` is the start of, when a state held it as only that (holdMarkerStart):
   * until it stops being the start of one, the next deltas just extend it.
   */
  #pendingStartOf: MarkerSet | undefined;
  /** scanFor's answer, reused: it runs on most deltas of prose. */
  readonly #scan: MarkerScan = { before: '', marker: undefined, next: 0 };
  /**
   * The plain lane: the state it was worked out for (see laneTarget), and where its deltas go.
   * Worked out after each push that ran `step`, only when the state object changed: reading
   * `kind` off a format's many state shapes is a polymorphic (often megamorphic) load, too dear
   * for every token. A state with no target yet is not remembered (a body becomes JSON only at
   * its "{", in the same state object).
   */
  #laneState: object | undefined;
  #laneWriter: PlainWriter | undefined;
  #laneRaw: RawText | undefined;

  push(delta: string): ParserEvent[] {
    const events = this.pushFast(delta);
    return typeof events === 'string' ? [{ type: 'call-args', callId: events, text: '' + delta }] : events;
  }

  pushFast(delta: string): string | ParserEvent[] {
    // knownString's `"" + delta`, written out: on the path every token takes, the call costs a
    // check that the imported binding is still that function.
    delta = '' + delta;
    const out = this.#out;
    const writer = this.#laneWriter;
    // Set only while nothing is held and the stream is open (see #updateLane, end).
    if (writer !== undefined) {
      const callId = writer.writePlain(delta, out);
      if (callId !== undefined) {
        this.#laneRaw!.add(delta);
        // The commonest push: one token inside a string argument, which is just the next
        // `call-args` fragment: its call's id stands for it, without the event list, unless a
        // half character is carried in or out (the list's business). Kept small: V8 inlines this
        // path (and the writer's) into the caller only while it fits its budget.
        if (callId.length !== 0 && delta.length !== 0 && out.empty) {
          const last = delta.charCodeAt(delta.length - 1);
          if (last < 0xd800 || last > 0xdbff) return callId;
        }
        return this.#plainEvents(callId, delta, out);
      }
    }
    return this.#pushSteps(delta, out);
  }

  /**
   * push(text.slice(from)), without making the slice (see ReasoningWrapper): the same events.
   * Always through `step`, which gives what the lane would.
   */
  pushFrom(text: string, from: number): ParserEvent[] {
    text = knownString(text);
    if (from === 0) return this.push(text);
    if (this.#pending !== '') return this.push(text.slice(from));
    return this.#pushSteps(text, this.#out, from);
  }

  /** The rest of a delta the lane consumed: its events are in `out`, or it is `callId`'s argument text. */
  #plainEvents(callId: string, delta: string, out: EventList): ParserEvent[] {
    if (callId !== '') out.args(callId, delta);
    return this.#taken(out.take(out.takeCarry()), false);
  }

  /** Steps through `delta` from `from` (0 unless #pending is empty). */
  #pushSteps(delta: string, out: EventList, from = 0): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    const startOf = this.#pendingStartOf;
    if (startOf !== undefined) {
      // A special token spelled as several tokens (DeepSeek's run to nine): while the held text
      // stays the start of a marker, step would only hold it again.
      const held = this.#pending + delta;
      if (startOf.startsMarker(held)) {
        this.#pending = held;
        return this.#taken(out.take(out.takeCarry()), false);
      }
      this.#pendingStartOf = undefined;
    }
    // `+` rather than a conditional: adding "" returns delta itself, and the result is typed as a
    // string for the optimiser (see known-string.ts).
    const buf = this.#pending + delta;
    this.#pending = '';
    let i = from;
    while (i < buf.length) i = this.step(buf, i, out);
    this.#updateLane();
    return this.#taken(out.take(out.takeCarry()), false);
  }

  #taken(events: ParserEvent[], final: boolean): ParserEvent[] {
    return this.#leading.deciding ? this.#leading.filter(events, final) : events;
  }

  #updateLane(): void {
    if (this.#pending !== '') {
      this.#laneState = this.#laneWriter = this.#laneRaw = undefined;
      return;
    }
    const state = this.laneState();
    if (state === this.#laneState && this.#laneWriter !== undefined) return;
    const target = state === undefined ? undefined : this.laneTarget(state);
    this.#laneState = target === undefined ? undefined : state;
    this.#laneWriter = target?.writer;
    this.#laneRaw = target?.raw;
  }

  end(cut = false): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#pendingStartOf = undefined;
    this.#laneState = this.#laneWriter = this.#laneRaw = undefined;
    const out = this.#out;
    const pending = this.#pending;
    this.#pending = '';
    this.finish(pending, out, cut);
    return this.#taken(out.take(), true);
  }

  /** Consumes `buf` from `i` (at least one character, or a change of state); returns the new index. */
  protected abstract step(buf: string, i: number, out: EventList): number;

  /**
   * The format's current state object, for the plain lane: a format whose states can write
   * deltas straight into a call's JSON arguments (see laneTarget) returns it; others, undefined.
   */
  protected laneState(): object | undefined {
    return undefined;
  }

  /**
   * Where deltas go in `state` while they stay inside a JSON string (the commonest case: a
   * token of a code argument): the call's arguments, whose `writePlain` takes the whole delta
   * or nothing, and the raw text it extends. undefined: every delta goes to `step`.
   */
  protected laneTarget(_state: object): LaneTarget | undefined {
    return undefined;
  }

  /**
   * The stream has ended; `pending` is what the current state held. `cut`: the token limit (or a
   * stop string) ended it, so a call with no closing marker of its own (a raw-code body) is unfinished.
   */
  protected abstract finish(pending: string, out: EventList, cut: boolean): void;

  /** Keeps `buf[i..]` for the next push; returns `buf.length`. */
  protected hold(buf: string, i: number): number {
    buf = knownString(buf);
    this.#pending = buf.slice(i);
    this.#pendingStartOf = undefined;
    return buf.length;
  }

  /**
   * hold() for text that is the start of one of `markers` (a proper prefix), in a state whose
   * step, given only text that is still the start of one of them, would hold it again and do
   * nothing else: the next deltas are then appended to it without running step. The caller
   * vouches for that (its step does nothing before matching the markers but skip characters
   * that no marker starts with).
   */
  protected holdMarkerStart(buf: string, i: number, markers: MarkerSet): number {
    const next = this.hold(buf, i);
    if (!markers.nested && this.#pending !== '') this.#pendingStartOf = markers;
    return next;
  }

  /**
   * Looks for the earliest of `markers` in `buf[i..]`: the text before it is `before`, the
   * marker `marker` and the index after it `next`. Without one, `before` is all but a possible
   * partial marker at the end, which is held (`marker` undefined, `next` = buf.length). The
   * answer is one object per parser, overwritten by the next call: read it at once.
   */
  protected scanFor(buf: string, i: number, markers: MarkerSet): MarkerScan {
    buf = knownString(buf);
    const rest = i === 0 ? buf : buf.slice(i);
    const scan = this.#scan;
    scan.marker = undefined;
    scan.next = buf.length;
    // Fast path for most deltas of prose: where no marker's first character occurs, there is
    // neither a marker nor the start of one. Not for a long text, which searchMarkers reads only
    // as far as its first marker: a character no marker here starts with was looked for to the
    // end of a large delta at every marker in it.
    if (rest.length <= LONG_TEXT && !markers.mayStartIn(rest)) {
      scan.before = rest;
      return scan;
    }
    const found = searchMarkers(rest, markers.list);
    if (found.found) {
      scan.before = rest.slice(0, found.index);
      scan.marker = found.marker;
      scan.next = i + found.index + found.marker.length;
      return scan;
    }
    scan.before = rest.slice(0, found.holdFrom);
    // What is held is the start of a marker, and the states that scan for markers do nothing
    // else first: see holdMarkerStart.
    this.holdMarkerStart(buf, i + found.holdFrom, markers);
    return scan;
  }
}

/** What FormatParser.scanFor found (see there). */
export interface MarkerScan {
  before: string;
  marker: string | undefined;
  next: number;
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
  literal = knownString(literal);
  // Builtins rather than a loop of charCodeAt: `buf` comes in many string representations
  // (cons, sliced, one- or two-byte), and a per-character method load on it goes megamorphic.
  const rest = buf.length - i;
  if (rest >= literal.length) return buf.startsWith(literal, i) ? 'full' : 'none';
  return literal.startsWith(rest <= 0 ? '' : i === 0 ? buf : buf.slice(i)) ? 'partial' : 'none';
}

/**
 * The raw text of a frame or call so far, released as text if it never becomes a valid call.
 * Kept as its parts, joined only if it is ever read (a broken call), in fixed-size chunks: an
 * add is a store, where `+=` made a cons string per delta and a growing array copied itself
 * over and over (bench/parsers).
 */
export class RawText {
  /** Filled chunks, oldest first. */
  readonly #full: string[][] = [];
  #chunk: string[] = newChunk();
  /** Parts used in #chunk. */
  #count = 0;

  constructor(first = '') {
    this.add(first);
  }

  add(text: string): void {
    let chunk = this.#chunk;
    if (this.#count === chunk.length) {
      this.#full.push(chunk);
      chunk = this.#chunk = newChunk();
      this.#count = 0;
    }
    chunk[this.#count++] = text;
  }

  get text(): string {
    let text = '';
    for (const chunk of this.#full) text += chunk.join('');
    return text + this.#chunk.slice(0, this.#count).join('');
  }
}

const RAW_CHUNK = 64;
/** A chunk of strings: copying it is a plain array copy, and storing a string never changes its elements kind. */
const EMPTY_CHUNK: readonly string[] = new Array<string>(RAW_CHUNK).fill('');

function newChunk(): string[] {
  return EMPTY_CHUNK.slice();
}
