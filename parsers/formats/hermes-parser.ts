import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { LaneTarget } from './plain-lane.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import { JsonCallObject, type CallObjectFailure, type CallObjectShape } from './json-call-object.ts';

export const HermesParserOptionsSchema = CallOptionsSchema.extend({
  startMarker: z.string().min(1).default('<tool_call>'),
  endMarker: z.string().min(1).default('</tool_call>'),
}).strict();

export type HermesParserOptions = z.input<typeof HermesParserOptionsSchema>;

const CALL_SHAPE: CallObjectShape = { argsKeys: ['arguments'], strict: false, startWhen: 'name', argsMayBeString: true };

type State =
  | { kind: 'prose' }
  /** After the start marker, before the "{": `raw` is the frame so far. */
  | { kind: 'opening'; raw: RawText }
  | { kind: 'call'; raw: RawText; call: JsonCallObject }
  /** The object has closed; waiting for the end marker (or the next start marker). `ws`: the whitespace since. */
  | { kind: 'closing'; raw: RawText; call: JsonCallObject; ws: string }
  /** After the end marker: whitespace here is frame if a start marker or the stream's end follows. */
  | { kind: 'after-call'; ws: string };

/**
 * Hermes / Qwen2.5 / Qwen3: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, repeated for
 * parallel calls. Rules:
 * - call-start when the name closes; a call ends only at `</tool_call>`, at the next `<tool_call>`,
 *   or at `end()` — never because the object happens to close (`}}` junk after it must fail it);
 * - `<tool_call>` not followed (after whitespace) by "{" is prose and goes out as text;
 * - once "{" follows, a call that breaks (invalid JSON, no name, unknown tool, junk before the end
 *   marker, or truncated by the end of the stream) yields `malformed` and then its whole raw text,
 *   marker included, as text; parsing resumes at the character that broke it.
 */
export function createHermesParser(options: HermesParserOptions = {}): ToolCallParser {
  return new HermesParser(parseFormatOptions(HermesParserOptionsSchema, options, 'hermes'));
}

class HermesParser extends FormatParser {
  readonly #registry: CallRegistry;
  readonly #start: string;
  readonly #end: string;
  /** `[startMarker]`, for scanFor: not a new array per delta of prose. */
  readonly #startMarkers: MarkerSet;
  /** What may follow a complete call object: its end marker, or the next call's start marker. */
  readonly #closingMarkers: MarkerSet;
  #state: State = { kind: 'prose' };

  constructor(options: z.output<typeof HermesParserOptionsSchema>) {
    super();
    this.#registry = new CallRegistry(options);
    this.#start = options.startMarker;
    this.#end = options.endMarker;
    this.#startMarkers = new MarkerSet([options.startMarker]);
    this.#closingMarkers = new MarkerSet([options.endMarker, options.startMarker]);
  }

  protected step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'prose': {
        const found = this.scanFor(buf, i, this.#startMarkers);
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        this.#state = { kind: 'opening', raw: new RawText(found.marker) };
        return found.next;
      }
      case 'opening': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        if (buf[j] !== '{') {
          out.text(state.raw.text);
          this.#state = { kind: 'prose' };
          return j;
        }
        this.#state = { kind: 'call', raw: state.raw, call: new JsonCallObject(this.#registry, CALL_SHAPE) };
        return j;
      }
      case 'call': {
        const stop = state.call.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (state.call.status === 'failed') return this.#broken(state.raw, state.call, state.call.failure!, stop, out);
        if (state.call.status === 'complete') this.#state = { kind: 'closing', raw: state.raw, call: state.call, ws: '' };
        return stop;
      }
      case 'closing': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        const end = matchLiteral(buf, j, this.#end);
        const next = matchLiteral(buf, j, this.#start);
        if (end === 'full' || next === 'full') {
          out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
          this.#state = end === 'full' ? { kind: 'after-call', ws: '' } : { kind: 'opening', raw: new RawText(this.#start) };
          return j + (end === 'full' ? this.#end.length : this.#start.length);
        }
        if (end === 'partial' || next === 'partial') return this.holdMarkerStart(buf, j, this.#closingMarkers);
        return this.#broken(state.raw, state.call, { kind: 'malformed', reason: `expected ${this.#end} after the call` }, j, out);
      }
      case 'after-call': {
        // The newline between two calls (and after the last) is formatting, not an answer: vLLM's
        // whole-text pass keeps only the text before the first <tool_call>. It joins the next
        // call's frame, and goes out as text only if that frame does; before other text, with it.
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        const next = matchLiteral(buf, j, this.#start);
        if (next === 'partial') return this.holdMarkerStart(buf, j, this.#startMarkers);
        if (next === 'full') {
          this.#state = { kind: 'opening', raw: new RawText(state.ws + this.#start) };
          return j + this.#start.length;
        }
        out.text(state.ws);
        this.#state = { kind: 'prose' };
        return j;
      }
    }
  }

  protected override laneState(): State {
    return this.#state;
  }

  protected override laneTarget(state: State): LaneTarget | undefined {
    return state.kind === 'call' ? { writer: state.call, raw: state.raw } : undefined;
  }

  protected finish(pending: string, out: EventList): void {
    const state = this.#state;
    this.#state = { kind: 'prose' };
    switch (state.kind) {
      case 'prose':
        out.text(pending);
        return;
      case 'opening':
        out.text(state.raw.text);
        return;
      case 'call':
        state.call.end();
        this.#broken(state.raw, state.call, state.call.failure!, 0, out);
        return;
      case 'closing':
        // The object is complete and the stream's end is an explicit boundary; a cut end
        // marker in `pending` belongs to the call's frame. A cut start marker (`<tool_ca`, or `<`,
        // which may be either) is the model's text, as it is after </tool_call>: out, with the
        // whitespace before it.
        out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
        if (pending !== '' && this.#start.startsWith(pending)) out.text(state.ws + pending);
        return;
      case 'after-call':
        // Whitespace after the last call is frame; a start marker cut by the end is text, with it.
        if (pending !== '') out.text(state.ws + pending);
        return;
    }
  }

  #broken(raw: RawText, call: JsonCallObject, failure: CallObjectFailure, resumeAt: number, out: EventList): number {
    out.push(call.callId === undefined ? { type: 'malformed', reason: failure.reason } : { type: 'malformed', callId: call.callId, reason: failure.reason });
    out.text(raw.text);
    this.#state = { kind: 'prose' };
    return resumeAt;
  }
}
