import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { LaneTarget } from './plain-lane.ts';
import { FormatParser, RawText, skipWhitespace } from './format-parser.ts';
import { JsonCallObject, type CallObjectShape } from './json-call-object.ts';

export const Llama3JsonParserOptionsSchema = CallOptionsSchema.strict();
export type Llama3JsonParserOptions = z.input<typeof Llama3JsonParserOptionsSchema>;

const PYTHON_TAG = '<|python_tag|>';
const PROSE_MARKERS = new MarkerSet([PYTHON_TAG, '{']);
const CALL_SHAPE: CallObjectShape = { argsKeys: ['parameters', 'arguments'], strict: true, extraKeys: ['type'], startWhen: 'name-and-args' };

type State =
  | { kind: 'prose' }
  /** After `<|python_tag|>` (or after a call's ";"): whitespace, then "{" or it was prose. */
  | { kind: 'lead'; raw: RawText }
  | { kind: 'call'; raw: RawText; call: JsonCallObject }
  /** A complete call; it ends at the next non-whitespace character or at end(). */
  | { kind: 'after-call'; call: JsonCallObject; ws: string };

/**
 * Llama 3.1/3.2/3.3 JSON tool calls: `{"name": …, "parameters": {…}}` ("arguments" accepted too),
 * anywhere in the text, several separated by ";", optionally after `<|python_tag|>`.
 * With no marker, any "{" in prose is a candidate: it is held back only while it can still be a
 * call — every key so far is "name", "parameters"/"arguments" or "type" — and released as text,
 * with no event, the moment it cannot (another key, a syntax error, no name or arguments).
 * call-start needs both the name and the start of the arguments object, so prose such as
 * `{"name": "Ada", …}` never starts a call. A call ends at the first non-whitespace character
 * after its object or at end(); whitespace and one ";" there are the separator before the next
 * call, and go out as text if no call follows. `<|python_tag|>` not followed
 * by "{" is text (raw Python after it is the `llama3-python` format's business).
 */
export function createLlama3JsonParser(options: Llama3JsonParserOptions = {}): ToolCallParser {
  return new Llama3JsonParser(parseFormatOptions(Llama3JsonParserOptionsSchema, options, 'llama3_json'));
}

class Llama3JsonParser extends FormatParser {
  readonly #registry: CallRegistry;
  #state: State = { kind: 'prose' };
  /** Set while #reread steps through text: a candidate failing in it leaves its text to read next here. */
  #rereading = false;
  #again: string | undefined;

  constructor(options: z.output<typeof Llama3JsonParserOptionsSchema>) {
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
        if (found.marker === '{') {
          this.#state = { kind: 'call', raw: new RawText(), call: this.#newCall() };
          return found.next - 1;
        }
        this.#state = { kind: 'lead', raw: new RawText(found.marker) };
        return found.next;
      }
      case 'lead': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        if (buf[j] === '{') {
          this.#state = { kind: 'call', raw: state.raw, call: this.#newCall() };
          return j;
        }
        out.text(state.raw.text);
        this.#state = { kind: 'prose' };
        return j;
      }
      case 'call': {
        const stop = state.call.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (state.call.status === 'failed') {
          const failure = state.call.failure!;
          if (state.call.callId !== undefined || failure.kind === 'rejected') {
            out.push(state.call.callId === undefined ? { type: 'malformed', reason: failure.reason } : { type: 'malformed', callId: state.call.callId, reason: failure.reason });
          }
          this.#state = { kind: 'prose' };
          const raw = state.raw.text;
          const next = state.call.callId === undefined ? nextCandidate(raw) : -1;
          if (next === -1) {
            out.text(raw);
            return stop;
          }
          // A "{" inside the failed candidate can start a call of its own: in `{"Sure.{"name": …}`
          // the prose's key string swallowed the call's brace. Its text is read again from there.
          out.text(raw.slice(0, next));
          const again = raw.slice(next) + buf.slice(stop);
          if (!this.#rereading) return this.#reread(again, buf.length, out);
          this.#again = again;
          return buf.length;
        }
        if (state.call.status === 'complete') this.#state = { kind: 'after-call', call: state.call, ws: '' };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
        // A separator (";" or whitespace) is the next call's frame, released as text if no call follows.
        if (buf[j] === ';') {
          this.#state = { kind: 'lead', raw: new RawText(`${state.ws};`) };
          return j + 1;
        }
        if (buf[j] === '{') {
          this.#state = { kind: 'call', raw: new RawText(state.ws), call: this.#newCall() };
          return j;
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
      case 'lead':
        out.text(state.raw.text);
        return;
      case 'call':
        state.call.end();
        if (state.call.callId !== undefined) out.push({ type: 'malformed', callId: state.call.callId, reason: state.call.failure!.reason });
        out.text(state.raw.text);
        return;
      case 'after-call':
        out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
        out.text(state.ws);
        return;
    }
  }

  /**
   * Steps through `text` (already seen, and the rest of this buffer) from the prose state; returns
   * `end`. A candidate that fails in it leaves the text to read next in `#again`, read by this
   * loop: called from `step` again, each failing candidate took a stack frame, and a few
   * thousand in one delta overflowed the stack.
   */
  #reread(text: string, end: number, out: EventList): number {
    this.#rereading = true;
    for (let next: string | undefined = text; next !== undefined; ) {
      this.#again = undefined;
      let i = 0;
      while (i < next.length) i = this.step(next, i, out);
      next = this.#again;
    }
    this.#rereading = false;
    return end;
  }

  #newCall(): JsonCallObject {
    return new JsonCallObject(this.#registry, CALL_SHAPE);
  }
}

/** Where a call could start in a failed candidate's text, after the candidate's own "{": -1 if nowhere. */
function nextCandidate(raw: string): number {
  const own = raw.indexOf('{');
  const brace = raw.indexOf('{', own + 1);
  const tag = raw.indexOf(PYTHON_TAG, own + 1);
  if (brace === -1) return tag;
  return tag === -1 ? brace : Math.min(brace, tag);
}
