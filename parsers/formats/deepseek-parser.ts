import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { LaneTarget } from './plain-lane.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import { JsonArguments } from './json-arguments.ts';

export const DeepSeekParserOptionsSchema = CallOptionsSchema.strict();
export type DeepSeekParserOptions = z.input<typeof DeepSeekParserOptionsSchema>;

// Full-width bars (U+FF5C) and U+2581 "▁", as in DeepSeek's tokenizer.
const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';
const MAX_HEAD = 256;
const PROSE_MARKERS = new MarkerSet([CALLS_BEGIN, CALL_BEGIN, CALLS_END]);
/** Where a call's head part ends: its own end, or a new call (then the head was no name). */
const TO_SEP = new MarkerSet([SEP, CALL_BEGIN]);
const TO_NEWLINE = new MarkerSet(['\n', CALL_BEGIN]);
/** What may come next in the calls region, after whitespace. */
const IN_REGION = new MarkerSet([CALL_BEGIN, CALLS_END, CALLS_BEGIN]);
const FENCE_CLOSE = new MarkerSet(['```']);
const AT_CALL_END = new MarkerSet([CALL_END]);

type State =
  | { kind: 'prose' }
  /**
   * Between `<｜tool▁calls▁begin｜>` and `<｜tool▁calls▁end｜>`, outside a call: whitespace there is
   * frame, and so is the opener written again (`ws` holds both, released only with text that follows).
   */
  | { kind: 'region'; ws: string }
  /**
   * After a region whose close was frame: whitespace here (`ws`) is dropped if the output ends
   * (a "\n" alone as content reads to a client as an empty-looking answer); before anything
   * else, markers included, it goes out as text, unchanged.
   */
  | { kind: 'after-region'; ws: string }
  /** V3: the call type ("function") before the separator. */
  | { kind: 'type'; raw: RawText; head: string }
  /** The name: V3 up to "\n", V3.1 up to the separator. */
  | { kind: 'name'; raw: RawText; head: string }
  /** V3: "```json" before the arguments. */
  | { kind: 'fence-open'; raw: RawText; args: JsonArguments }
  /** `fenced`: V3's "```json" opened the arguments, so "```" must close them. */
  | { kind: 'args-before'; raw: RawText; args: JsonArguments; fenced: boolean }
  | { kind: 'args'; raw: RawText; args: JsonArguments; fenced: boolean }
  /** V3: "```" after the arguments. */
  | { kind: 'fence-close'; raw: RawText; args: JsonArguments }
  | { kind: 'call-end'; raw: RawText; args: JsonArguments };

/**
 * DeepSeek V3 / R1:
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`
 * and V3.1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…`.
 * The region tokens and the whitespace between calls are frame, never content; text before and
 * after the region is content, unchanged, and so is a `<｜tool▁calls▁end｜>` with no region open.
 * call-start once the name is complete; call-end at `<｜tool▁call▁end｜>` (or end() after
 * complete arguments). A broken or truncated call yields
 * `malformed` and then its raw text from `<｜tool▁call▁begin｜>` as text, from
 * `<｜tool▁calls▁begin｜>` when it is its region's first call (see #opener).
 */
export function createDeepSeekParser(version: 'v3' | 'v31', options: DeepSeekParserOptions = {}): ToolCallParser {
  return new DeepSeekParser(version, parseFormatOptions(DeepSeekParserOptionsSchema, options, `deepseek_${version}`));
}

class DeepSeekParser extends FormatParser {
  readonly #v3: boolean;
  readonly #registry: CallRegistry;
  #state: State = { kind: 'prose' };
  /**
   * The open region's `<｜tool▁calls▁begin｜>` (`none`: no region open): `pending` until a call
   * in it finishes (then `frame`). If the region's first call breaks, or text stands where a call
   * should, it goes out with that text (`text`), so that released text is what the model wrote,
   * and the region's `<｜tool▁calls▁end｜>` is then text too.
   */
  #opener: 'none' | 'pending' | 'frame' | 'text' = 'none';

  constructor(version: 'v3' | 'v31', options: z.output<typeof DeepSeekParserOptionsSchema>) {
    super();
    this.#v3 = version === 'v3';
    this.#registry = new CallRegistry(options);
  }

  protected step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'prose': {
        const found = this.scanFor(buf, i, PROSE_MARKERS);
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        if (found.marker === CALL_BEGIN) {
          this.#state = this.#head(new RawText(found.marker));
        } else if (found.marker === CALLS_BEGIN) {
          this.#state = { kind: 'region', ws: '' };
          this.#opener = 'pending';
        } else {
          this.#closeRegion(out);
        }
        return found.next;
      }
      case 'region': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        const call = matchLiteral(buf, j, CALL_BEGIN);
        const end = matchLiteral(buf, j, CALLS_END);
        const again = matchLiteral(buf, j, CALLS_BEGIN);
        if (again === 'full') {
          // Written twice (as Mistral's fine-tunes repeat [TOOL_CALLS]): frame with the first.
          state.ws += CALLS_BEGIN;
          return j + CALLS_BEGIN.length;
        }
        if (call === 'full') {
          // The region's first call carries its opener, released with it if it breaks.
          const raw = this.#opener === 'pending' ? new RawText(CALLS_BEGIN + state.ws) : new RawText();
          raw.add(CALL_BEGIN);
          this.#state = this.#head(raw);
          return j + CALL_BEGIN.length;
        }
        if (end === 'full') {
          const framed = this.#opener === 'frame' || this.#opener === 'pending';
          this.#closeRegion(out);
          this.#state = framed ? { kind: 'after-region', ws: '' } : { kind: 'prose' };
          return j + CALLS_END.length;
        }
        if (call === 'partial' || end === 'partial' || again === 'partial') return this.holdMarkerStart(buf, j, IN_REGION);
        if (this.#opener === 'pending') {
          this.#opener = 'text';
          out.text(CALLS_BEGIN);
        }
        out.text(state.ws);
        this.#state = { kind: 'prose' };
        return j;
      }
      case 'after-region': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        out.text(state.ws);
        this.#state = { kind: 'prose' };
        return j;
      }
      case 'type':
      case 'name': {
        const markers = state.kind === 'type' || !this.#v3 ? TO_SEP : TO_NEWLINE;
        const until = markers.list[0]!;
        const found = this.scanFor(buf, i, markers);
        state.head += found.before;
        state.raw.add(found.before);
        if (found.marker === undefined) return buf.length;
        // Judged only at the marker, so that the verdict does not depend on the split.
        if (state.head.length > MAX_HEAD || found.marker === CALL_BEGIN) return this.#broken(state.raw, undefined, 'no tool name', found.next - found.marker.length, out);
        state.raw.add(until);
        if (state.kind === 'type') {
          this.#state = { kind: 'name', raw: state.raw, head: '' };
          return found.next;
        }
        const name = state.head.trim();
        const rejection = this.#registry.rejection(name);
        if (rejection !== undefined) return this.#broken(state.raw, undefined, rejection, found.next, out);
        const callId = this.#registry.nextCallId();
        out.push({ type: 'call-start', callId, name });
        const args = new JsonArguments(callId, { lineField: this.#registry.lineField(name), maxFieldDepth: this.#registry.maxFieldDepth });
        this.#state = this.#v3 ? { kind: 'fence-open', raw: state.raw, args } : { kind: 'args-before', raw: state.raw, args, fenced: false };
        return found.next;
      }
      case 'fence-open': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        const json = matchLiteral(buf, j, '```json');
        const bare = matchLiteral(buf, j, '```');
        if (json === 'partial' || (bare === 'full' && json !== 'full' && j + 3 === buf.length)) return this.hold(buf, j);
        const fence = json === 'full' ? '```json' : bare === 'full' ? '```' : '';
        state.raw.add(fence);
        // Bare arguments need no closing fence: expecting one broke a call that never opened one.
        this.#state = { kind: 'args-before', raw: state.raw, args: state.args, fenced: fence !== '' };
        return j + fence.length;
      }
      case 'args-before': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        this.#state = { kind: 'args', raw: state.raw, args: state.args, fenced: state.fenced };
        return j;
      }
      case 'args': {
        const stop = state.args.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (state.args.status === 'failed') return this.#broken(state.raw, state.args.callId, state.args.failure, stop, out);
        if (state.args.status === 'complete') this.#state = { kind: state.fenced ? 'fence-close' : 'call-end', raw: state.raw, args: state.args };
        return stop;
      }
      case 'fence-close':
      case 'call-end': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        const literal = state.kind === 'fence-close' ? '```' : CALL_END;
        const match = matchLiteral(buf, j, literal);
        if (match === 'partial') return this.holdMarkerStart(buf, j, state.kind === 'fence-close' ? FENCE_CLOSE : AT_CALL_END);
        if (match === 'none') return this.#broken(state.raw, state.args.callId, `expected ${literal} after the arguments`, j, out);
        state.raw.add(literal);
        if (state.kind === 'fence-close') {
          this.#state = { kind: 'call-end', raw: state.raw, args: state.args };
        } else {
          out.push({ type: 'call-end', callId: state.args.callId, args: state.args.args });
          // A finished call without an opener (bare <｜tool▁call▁begin｜>) opens its region too, so
          // a <｜tool▁calls▁end｜> after it is that region's frame, not stray.
          if (this.#opener === 'pending' || this.#opener === 'none') this.#opener = 'frame';
          this.#state = { kind: 'region', ws: '' };
        }
        return j + literal.length;
      }
    }
  }

  protected override laneState(): State {
    return this.#state;
  }

  protected override laneTarget(state: State): LaneTarget | undefined {
    return state.kind === 'args' ? { writer: state.args, raw: state.raw } : undefined;
  }

  protected finish(pending: string, out: EventList): void {
    const state = this.#state;
    this.#state = { kind: 'prose' };
    switch (state.kind) {
      case 'prose':
        out.text(pending);
        return;
      case 'after-region':
        // Whitespace alone (never held as pending) up to the end: frame.
        return;
      case 'region':
        // A marker cut by the end is text, with the whitespace before it (and an opener no call used).
        if (pending !== '') out.text((this.#opener === 'pending' ? CALLS_BEGIN : '') + state.ws + pending);
        return;
      case 'type':
      case 'name':
        state.raw.add(pending);
        this.#broken(state.raw, undefined, 'truncated call', 0, out);
        return;
      case 'fence-open':
      case 'args-before':
      case 'args':
        state.args.end();
        state.raw.add(pending);
        this.#broken(state.raw, state.args.callId, state.args.failure, 0, out);
        return;
      case 'fence-close':
      case 'call-end':
        // Complete arguments; the end of the stream is the boundary.
        out.push({ type: 'call-end', callId: state.args.callId, args: state.args.args });
        return;
    }
  }

  #head(raw: RawText): State {
    return this.#v3 ? { kind: 'type', raw, head: '' } : { kind: 'name', raw, head: '' };
  }

  /**
   * `<｜tool▁calls▁end｜>`: frame, unless its region's opener went out as text, or no region is
   * open: the model wrote it, so a stray one is text as written (vLLM keeps it in content too).
   */
  #closeRegion(out: EventList): void {
    if (this.#opener === 'text' || this.#opener === 'none') out.text(CALLS_END);
    this.#opener = 'none';
  }

  #broken(raw: RawText, callId: string | undefined, reason: string, resumeAt: number, out: EventList): number {
    out.push(callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId, reason });
    // A broken first call carries the region's opener in `raw` (see #opener).
    if (this.#opener === 'pending') this.#opener = 'text';
    out.text(raw.text);
    this.#state = { kind: 'prose' };
    return resumeAt;
  }
}
