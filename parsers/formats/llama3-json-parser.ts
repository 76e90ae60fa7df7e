import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import type { LaneTarget } from './plain-lane.ts';
import { FormatParser, RawText, skipWhitespace } from './format-parser.ts';
import { JsonCallObject, type CallObjectShape } from './json-call-object.ts';
import { LLAMA3_END_TOKENS as END_TOKENS, LLAMA3_PYTHON_TAG as PYTHON_TAG } from './llama3-special-tokens.ts';

export const Llama3JsonParserOptionsSchema = CallOptionsSchema.strict();
export type Llama3JsonParserOptions = z.input<typeof Llama3JsonParserOptionsSchema>;

const PROSE_MARKERS = new MarkerSet([PYTHON_TAG, '{', '[', ...END_TOKENS]);
const CALL_SHAPE: CallObjectShape = {
  argsKeys: ['parameters', 'arguments'],
  strict: true,
  // OpenAI's tool-call keys besides the function (Mistral's list items carry "id" too): part of a
  // call's shape, so allowed before call-start, which `{"id": …, "type": "function", "function": {…}}` needs.
  extraKeys: ['type', 'id'],
  ignoreKeysOnceStarted: true,
  wrapperKey: 'function',
  startWhen: 'name-and-args',
  // `"parameters": "{…}"`, and OpenAI's own wrapper, whose `arguments` is such a string.
  argsMayBeString: true,
};

type State =
  | { kind: 'prose' }
  /**
   * After `<|python_tag|>`, a call's ";" or "," or a "[" (`inList`): whitespace, then "{" (or,
   * not in a list, "[") or it was prose.
   */
  | { kind: 'lead'; raw: RawText; inList: boolean }
  | { kind: 'call'; raw: RawText; call: JsonCallObject; inList: boolean }
  /** A complete call; it ends at the next non-whitespace character or at end(). */
  | { kind: 'after-call'; call: JsonCallObject; ws: string; inList: boolean }
  /**
   * Prose after a call that has ended, before any text: the whitespace there, and a ";" after the
   * call (`frame`), is frame unless text follows it. `{…}\n<|eom_id|>` is a call and nothing else
   * (vLLM's content is null for it, and its stream reads that "\n" as JSON whitespace); a content
   * delta of "\n" alone reads to an OpenAI client as an empty-looking message. A ";" separates calls
   * in Llama 3's format, so one no call follows (`{…};\n`) closes the calls, no answer. So it is held:
   * dropped at end(), through end tokens (dropped themselves), the frame of a next call (released
   * with it if that breaks), and out as text, unchanged, in front of the first text that follows,
   * so that none is lost.
   */
  | { kind: 'trailing'; frame: string };

/**
 * Llama 3.1/3.2/3.3 JSON tool calls: `{"name": …, "parameters": {…}}` ("arguments" accepted too),
 * anywhere in the text, several separated by ";", optionally after `<|python_tag|>`; also as
 * OpenAI's `{"type": "function", "function": {…}}` and in a `[…, …]` list.
 * With no marker, any "{" in prose is a candidate: it is held back only while it can still be a
 * call — every key so far is "name", "parameters"/"arguments", "type", "id" or a first "function" —
 * and released as text, with no event, the moment it cannot (another key, a syntax error, no name
 * or arguments). call-start needs both the name and the start of the arguments object, so prose
 * such as `{"name": "Ada", …}` never starts a call; from there on other keys are ignored, as
 * vLLM ignores them. A call ends at the first non-whitespace character after its object or at
 * end(); whitespace and one ";" there are the separator before the next call; after the last call
 * they are frame unless text follows them, and then go out with it ('trailing'). A "[" before a
 * call, and the "," between list items and the "]" after them, are frame as the next call's. `<|python_tag|>` not followed by "{" or "[" is text (raw Python
 * after it is the `llama3-python` format's business). `<|eom_id|>` and `<|eot_id|>` are dropped
 * wherever text outside a call is read, not only after a call: a plain answer ends with one just
 * as often; the text after one (an engine that did not stop there) is kept, and inside a call's
 * JSON they are the JSON's to judge.
 */
export function createLlama3JsonParser(options: Llama3JsonParserOptions = {}): ToolCallParser {
  return new Llama3JsonParser(parseFormatOptions(Llama3JsonParserOptionsSchema, options, 'llama3_json'));
}

class Llama3JsonParser extends FormatParser {
  readonly #registry: CallRegistry;
  #state: State = { kind: 'prose' };
  /**
   * A failed candidate's text from the next "{" in it (which may start a call of its own), to be
   * read before the text after the candidate: set by #step, read by #reread.
   */
  #replay: string | undefined;
  /** Set while #reread steps through replayed text: a hold there is kept in #carry, not in the parser's pending text. */
  #replaying = false;
  /** What a state held at the end of a replayed text: it goes in front of the text read next. */
  #carry = '';

  constructor(options: z.output<typeof Llama3JsonParserOptionsSchema>) {
    super();
    this.#registry = new CallRegistry(options);
  }

  protected step(buf: string, i: number, out: EventList): number {
    const next = this.#step(buf, i, out);
    return this.#replay === undefined || this.#replaying ? next : this.#reread(buf, next, out);
  }

  protected override hold(buf: string, i: number): number {
    if (!this.#replaying) return super.hold(buf, i);
    this.#carry = knownString(buf).slice(i);
    return buf.length;
  }

  #step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'prose':
      case 'trailing': {
        let frame = '';
        if (state.kind === 'trailing') {
          const j = skipWhitespace(buf, i);
          state.frame += buf.slice(i, j);
          if (j === buf.length) return j;
          i = j;
        }
        const found = this.scanFor(buf, i, PROSE_MARKERS);
        if (state.kind === 'trailing') {
          // Nothing yet (a marker's start held) or an end token (dropped): still undecided.
          if (found.before === '' && (found.marker === undefined || END_TOKENS.includes(found.marker))) return found.next;
          this.#state = { kind: 'prose' };
          if (found.before === '') frame = state.frame;
          else out.text(state.frame);
        }
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        if (END_TOKENS.includes(found.marker)) return found.next;
        if (found.marker === '{') {
          this.#state = { kind: 'call', raw: new RawText(frame), call: this.#newCall(), inList: false };
          return found.next - 1;
        }
        this.#state = { kind: 'lead', raw: new RawText(frame + found.marker), inList: found.marker === '[' };
        return found.next;
      }
      case 'lead': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        if (buf[j] === '{') {
          this.#state = { kind: 'call', raw: state.raw, call: this.#newCall(), inList: state.inList };
          return j;
        }
        if (buf[j] === '[' && !state.inList) {
          state.raw.add('[');
          this.#state = { kind: 'lead', raw: state.raw, inList: true };
          return j + 1;
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
          this.#replay = raw.slice(next);
          return stop;
        }
        if (state.call.status === 'complete') this.#state = { kind: 'after-call', call: state.call, ws: '', inList: state.inList };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
        const c = buf[j]!;
        // A list's "]" after a call is frame: the call came after its "[".
        if (c === ']' && state.inList) {
          this.#state = { kind: 'trailing', frame: '' };
          return j + 1;
        }
        // A ";" is the next call's frame, or the end's, and text only if text follows it ('trailing').
        if (c === ';' && !state.inList) {
          this.#state = { kind: 'trailing', frame: state.ws + c };
          return j + 1;
        }
        // A list's separator is the next call's frame, released as text if no call follows.
        if (state.inList && (c === ';' || c === ',')) {
          this.#state = { kind: 'lead', raw: new RawText(state.ws + c), inList: state.inList };
          return j + 1;
        }
        if (c === '{') {
          this.#state = { kind: 'call', raw: new RawText(state.ws), call: this.#newCall(), inList: state.inList };
          return j;
        }
        this.#state = { kind: 'trailing', frame: state.ws };
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
        // The whitespace after the last call is frame (see 'trailing').
        out.push({ type: 'call-end', callId: state.call.callId!, args: state.call.args });
        return;
      case 'trailing':
        // What is held is the start of a marker the end cut: text, with the whitespace before it.
        if (pending !== '') out.text(state.frame + pending);
        return;
    }
  }

  /**
   * Reads the replayed text (#replay), then `buf` goes on at `at` (returned, unless what a replay
   * held had to be joined to the rest of `buf`, which is then read here too). A candidate failing
   * inside a replayed text replays its own, read before the rest of that text: a stack, not
   * recursion (each failing candidate took a stack frame, and a few thousand in one delta
   * overflowed it), and the texts are never joined to the rest of the buffer (which copied it at
   * every failing candidate, quadratic in a large delta).
   */
  #reread(buf: string, at: number, out: EventList): number {
    this.#replaying = true;
    const stack = [{ text: this.#replay!, i: 0 }];
    this.#replay = undefined;
    let tail: { text: string; i: number } | undefined;
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        if (this.#carry === '') break;
        // Held at the end of the last replayed text: it goes in front of the rest of the buffer,
        // read here, where a hold at its end is the parser's own again.
        tail = { text: this.#carry + buf.slice(at), i: 0 };
        this.#carry = '';
        stack.push(tail);
        continue;
      }
      if (top.i >= top.text.length) {
        stack.pop();
        const below = stack[stack.length - 1];
        if (below !== undefined && this.#carry !== '') {
          below.text = this.#carry + below.text.slice(below.i);
          below.i = 0;
          this.#carry = '';
        }
        continue;
      }
      this.#replaying = top !== tail;
      top.i = this.#step(top.text, top.i, out);
      this.#replaying = true;
      if (this.#replay !== undefined) {
        stack.push({ text: this.#replay, i: 0 });
        this.#replay = undefined;
      }
    }
    this.#replaying = false;
    return tail === undefined ? at : buf.length;
  }

  #newCall(): JsonCallObject {
    return new JsonCallObject(this.#registry, CALL_SHAPE);
  }
}

/**
 * Where a call could start in a failed candidate's text, after the candidate's own "{", or where
 * an end token in it stands (read again as prose, which drops it): -1 if nowhere.
 */
function nextCandidate(raw: string): number {
  const own = raw.indexOf('{');
  let next = -1;
  for (const marker of PROSE_MARKERS.list) {
    const at = raw.indexOf(marker, own + 1);
    if (at !== -1 && (next === -1 || at < next)) next = at;
  }
  return next;
}
