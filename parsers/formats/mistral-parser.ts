import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { LaneTarget } from './plain-lane.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import { JsonArguments } from './json-arguments.ts';
import { JsonCallObject, type CallObjectShape } from './json-call-object.ts';
import { isNameChar, readCallId, readName, type HeadStep } from './mistral-call-head.ts';

export const MistralParserOptionsSchema = CallOptionsSchema.strict();
export type MistralParserOptions = z.input<typeof MistralParserOptionsSchema>;

const TOOL_CALLS = '[TOOL_CALLS]';
const PROSE_MARKERS = new MarkerSet([TOOL_CALLS]);
// Arguments as a string holding the object: vLLM's list reading takes the item as a call too
// (`tool_call.get("arguments", {})`, passed on as a JSON string); decoded, as hermes does.
const CALL_SHAPE: CallObjectShape = { argsKeys: ['arguments'], strict: false, extraKeys: ['id'], startWhen: 'name', argsOptional: true, argsMayBeString: true };

type Call = JsonCallObject | JsonArguments;

type State =
  | { kind: 'prose' }
  /** After [TOOL_CALLS] (once or more): "[" (v0.3 list), "{" (one object) or a name (v11+) decides the shape. */
  | { kind: 'opening'; raw: RawText }
  /** v0.3 list: before an item ("{"), or "]" when `first`. */
  | { kind: 'item'; raw: RawText; first: boolean }
  | { kind: 'object'; raw: RawText; call: JsonCallObject; inList: boolean }
  /** v0.3 list: after an item, "," or "]" (`ws`: the whitespace since the item). */
  | { kind: 'after-item'; raw: RawText; call: JsonCallObject; ws: string }
  /** v11+: the name, up to [ARGS] (optionally name[CALL_ID]id[ARGS]) or straight to its "{". */
  | { kind: 'name'; raw: RawText; name: string }
  | { kind: 'call-id'; raw: RawText; name: string; id: number }
  | { kind: 'args-before'; raw: RawText; args: JsonArguments }
  | { kind: 'args'; raw: RawText; args: JsonArguments }
  /**
   * A call with no end marker is complete; it ends at the next non-whitespace character or at
   * end(). Also after a v0.3 list's "]" (`call` undefined): either way `ws` is whitespace so far.
   */
  | { kind: 'after-call'; call: Call | undefined; ws: string };

/**
 * Mistral: `[TOOL_CALLS] [{"name": …, "arguments": {…}}, …]` (v0.3 tokenizers; an item without
 * "arguments" calls with `{}`, as vLLM reads it), `[TOOL_CALLS]name[ARGS]{…}` (v11+, repeated for
 * parallel calls, with an optional `[CALL_ID]id` before `[ARGS]`), `[TOOL_CALLS]name{…}` (the same
 * as vLLM passes it on under `--tokenizer-mode mistral`, whose detokenizer drops `[ARGS]` whatever
 * skip_special_tokens says), and a bare `[TOOL_CALLS]{…}` object.
 * A list item ends at the "," or "]" after it; a call without an end marker ends at the first
 * non-whitespace character after its JSON, or at end(). Text after the calls (e.g. after "]") is
 * content; whitespace alone between calls or after the last is frame. `[TOOL_CALLS]` followed by
 * anything else is prose; a broken call yields `malformed` then its raw text (from the marker, or
 * from the previous call's boundary) as text.
 */
export function createMistralParser(options: MistralParserOptions = {}): ToolCallParser {
  return new MistralParser(parseFormatOptions(MistralParserOptionsSchema, options, 'mistral'));
}

class MistralParser extends FormatParser {
  readonly #registry: CallRegistry;
  #state: State = { kind: 'prose' };

  constructor(options: z.output<typeof MistralParserOptionsSchema>) {
    super();
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
        this.#state = { kind: 'opening', raw: new RawText(found.marker) };
        return found.next;
      }
      case 'opening': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        const c = buf[j]!;
        if (c === '[') {
          // [TOOL_CALLS] again (small fine-tunes repeat it): frame, as vLLM drops every one. Taken
          // for a list's "[", it read the call after it as prose.
          const again = matchLiteral(buf, j, TOOL_CALLS);
          if (again === 'partial') return this.holdMarkerStart(buf, j, PROSE_MARKERS);
          if (again === 'full') {
            state.raw.add(TOOL_CALLS);
            return j + TOOL_CALLS.length;
          }
          state.raw.add(c);
          this.#state = { kind: 'item', raw: state.raw, first: true };
          return j + 1;
        }
        if (c === '{') {
          this.#state = { kind: 'object', raw: state.raw, call: this.#newObject(), inList: false };
          return j;
        }
        if (isNameChar(buf.charCodeAt(j))) {
          this.#state = { kind: 'name', raw: state.raw, name: '' };
          return j;
        }
        return this.#prose(state.raw, j, out);
      }
      case 'item': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        if (buf[j] === '{') {
          this.#state = { kind: 'object', raw: state.raw, call: this.#newObject(), inList: true };
          return j;
        }
        // `[]` is no call; `[{…},]` (a trailing comma, no JSON but common) ends a list whose items
        // each ended, and ran, at their ",": nothing broke, so the ",]" is frame, as in pythonic.
        if (buf[j] === ']') {
          this.#state = { kind: 'after-call', call: undefined, ws: '' };
          return j + 1;
        }
        return state.first ? this.#prose(state.raw, j, out) : this.#broken(state.raw, undefined, 'expected a call after ","', j, out);
      }
      case 'object': {
        const stop = state.call.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (state.call.status === 'failed') return this.#broken(state.raw, state.call.callId, state.call.failure!.reason, stop, out);
        if (state.call.status === 'complete') {
          this.#state = state.inList ? { kind: 'after-item', raw: state.raw, call: state.call, ws: '' } : { kind: 'after-call', call: state.call, ws: '' };
        }
        return stop;
      }
      case 'after-item': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        if (buf[j] === ',' || buf[j] === ']') {
          this.#end(state.call, out);
          // The separator is the next item's frame: released with it if it breaks, as written.
          this.#state = buf[j] === ',' ? { kind: 'item', raw: new RawText(state.ws + ','), first: false } : { kind: 'after-call', call: undefined, ws: '' };
          return j + 1;
        }
        return this.#broken(state.raw, state.call.callId, 'expected "," or "]" after a call', j, out);
      }
      case 'name':
        return this.#head(readName(buf, i, state), state.raw, state.name, buf, out);
      case 'call-id':
        return this.#head(readCallId(buf, i, state), state.raw, state.name, buf, out);
      case 'args-before': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        this.#state = { kind: 'args', raw: state.raw, args: state.args };
        return j;
      }
      case 'args': {
        const stop = state.args.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (state.args.status === 'failed') return this.#broken(state.raw, state.args.callId, state.args.failure, stop, out);
        if (state.args.status === 'complete') this.#state = { kind: 'after-call', call: state.args, ws: '' };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        // Whitespace between two calls or lists is formatting, not an answer (vLLM has it nowhere
        // in content: its whole-text pass drops it, its stream appends it to the arguments): it
        // goes with the next [TOOL_CALLS]'s frame, and out as text only if that frame becomes text.
        const next = matchLiteral(buf, j, TOOL_CALLS);
        if (next === 'partial') return this.holdMarkerStart(buf, j, PROSE_MARKERS);
        if (state.call !== undefined) this.#end(state.call, out);
        if (next === 'full') {
          this.#state = { kind: 'opening', raw: new RawText(state.ws + TOOL_CALLS) };
          return j + TOOL_CALLS.length;
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
    return state.kind === 'object' ? { writer: state.call, raw: state.raw } : state.kind === 'args' ? { writer: state.args, raw: state.raw } : undefined;
  }

  protected finish(pending: string, out: EventList): void {
    const state = this.#state;
    this.#state = { kind: 'prose' };
    switch (state.kind) {
      case 'prose':
        out.text(pending);
        return;
      case 'opening':
      case 'name':
      case 'call-id':
        out.text(state.raw.text + pending);
        return;
      case 'item':
        if (state.first) out.text(state.raw.text);
        else this.#broken(state.raw, undefined, 'truncated call list', 0, out);
        return;
      case 'object':
        state.call.end();
        this.#broken(state.raw, state.call.callId, state.call.failure!.reason, 0, out);
        return;
      case 'after-item':
        // A complete object whose list was cut: the end of the stream is its boundary.
        this.#end(state.call, out);
        return;
      case 'args-before':
      case 'args':
        state.args.end();
        this.#broken(state.raw, state.args.callId, state.args.failure, 0, out);
        return;
      case 'after-call':
        // Whitespace after the last call is formatting too; a cut [TOOL_CALLS] (`pending`) is text.
        if (state.call !== undefined) this.#end(state.call, out);
        out.text(pending === '' ? '' : state.ws + pending);
        return;
    }
  }

  #newObject(): JsonCallObject {
    return new JsonCallObject(this.#registry, CALL_SHAPE);
  }

  /** Acts on what the v11+ head (`name`, `[CALL_ID]id`, `[ARGS]`) read. */
  #head(step: HeadStep, raw: RawText, name: string, buf: string, out: EventList): number {
    switch (step.kind) {
      case 'more':
        return step.at;
      case 'hold':
        return this.holdMarkerStart(buf, step.at, step.markers);
      case 'call-id':
        this.#state = { kind: 'call-id', raw, name, id: 0 };
        return step.at;
      case 'args':
        return this.#startArgs(raw, name, step.at, out);
      case 'prose':
        return this.#prose(raw, step.at, out);
    }
  }

  #startArgs(raw: RawText, name: string, next: number, out: EventList): number {
    const rejection = this.#registry.rejection(name);
    if (rejection !== undefined) return this.#broken(raw, undefined, rejection, next, out);
    const callId = this.#registry.nextCallId();
    out.push({ type: 'call-start', callId, name });
    const args = new JsonArguments(callId, { lineField: this.#registry.lineField(name), maxFieldDepth: this.#registry.maxFieldDepth });
    this.#state = { kind: 'args-before', raw, args };
    return next;
  }

  #end(call: Call, out: EventList): void {
    out.push({ type: 'call-end', callId: call.callId!, args: call.args });
  }

  /** Never a call: the frame so far is prose. */
  #prose(raw: RawText, resumeAt: number, out: EventList): number {
    out.text(raw.text);
    this.#state = { kind: 'prose' };
    return resumeAt;
  }

  #broken(raw: RawText, callId: string | undefined, reason: string, resumeAt: number, out: EventList): number {
    out.push(callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId, reason });
    out.text(raw.text);
    this.#state = { kind: 'prose' };
    return resumeAt;
  }
}
