import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import type { LaneTarget } from './plain-lane.ts';
import { ToolBody } from './tool-body.ts';

export const FunctionaryV2ParserOptionsSchema = CallOptionsSchema.extend({
  /** Tools whose body may be raw code rather than JSON (Functionary's code interpreter). */
  codeTools: z.array(z.string().min(1)).default(['python']),
}).strict();
export type FunctionaryV2ParserOptions = z.input<typeof FunctionaryV2ParserOptionsSchema>;

const FROM = '<|from|>';
const RECIPIENT = '<|recipient|>';
const CONTENT = '<|content|>';
const STOP = '<|stop|>';
/** A message's body ends at the next message or at <|stop|>; the "\n" before them is frame. */
/** What a message may start with; what ends a call's arguments. */
const HEADER_STARTS = new MarkerSet([FROM, RECIPIENT]);
const AFTER_ARGS = new MarkerSet([FROM, STOP]);
const TO_RECIPIENT = new MarkerSet([RECIPIENT]);
const TO_CONTENT = new MarkerSet([CONTENT]);
const BODY_ENDS = new MarkerSet([`\n${FROM}`, FROM, `\n${STOP}`, STOP]);
const MAX_HEADER = 128;

type State =
  | { kind: 'start' }
  /** After <|from|>: the role, up to <|recipient|>. */
  | { kind: 'from'; raw: RawText; role: string }
  | { kind: 'recipient'; raw: RawText; name: string }
  | { kind: 'content-marker'; raw: RawText; name: string }
  | { kind: 'content' }
  | { kind: 'body'; raw: RawText; body: ToolBody }
  /** Complete JSON arguments: only whitespace (`ws`) may come before the next <|from|> or <|stop|>. */
  | { kind: 'after-call'; raw: RawText; body: ToolBody; ws: string };

/**
 * Functionary v2: messages `<|from|>assistant\n<|recipient|>NAME\n<|content|>BODY`, ending at the
 * next `<|from|>` or `<|stop|>`; recipient `all` is content for the user, any other name a call
 * with JSON arguments (raw code for `codeTools`). The prompt usually pre-fills
 * `<|from|>assistant\n<|recipient|>`, so the output may start with the name itself.
 * A JSON call ends at the next `<|from|>`/`<|stop|>` or at end(); anything else after its
 * arguments makes it `malformed`, released as text. A header that does not parse is content.
 */
export function createFunctionaryV2Parser(options: FunctionaryV2ParserOptions = {}): ToolCallParser {
  return new FunctionaryV2Parser(parseFormatOptions(FunctionaryV2ParserOptionsSchema, options, 'functionary_v2'));
}

class FunctionaryV2Parser extends FormatParser {
  readonly #registry: CallRegistry;
  readonly #codeTools: readonly string[];
  #state: State = { kind: 'start' };

  constructor(options: z.output<typeof FunctionaryV2ParserOptionsSchema>) {
    super();
    this.#registry = new CallRegistry(options);
    this.#codeTools = options.codeTools;
  }

  protected step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'start': {
        const from = matchLiteral(buf, i, FROM);
        const recipient = matchLiteral(buf, i, RECIPIENT);
        if (from === 'partial' || recipient === 'partial') return this.holdMarkerStart(buf, i, HEADER_STARTS);
        if (from === 'full') {
          this.#state = { kind: 'from', raw: new RawText(FROM), role: '' };
          return i + FROM.length;
        }
        this.#state = { kind: 'recipient', raw: new RawText(recipient === 'full' ? RECIPIENT : ''), name: '' };
        return recipient === 'full' ? i + RECIPIENT.length : i;
      }
      case 'from': {
        // The role line ("assistant", spaces, newlines) up to <|recipient|>; bounded so that a
        // bad header fails at the same character however the text is split.
        const room = MAX_HEADER + 1 - state.role.length;
        let j = i;
        while (j < buf.length && j - i < room && isRoleChar(buf.charCodeAt(j))) j++;
        state.role += buf.slice(i, j);
        state.raw.add(buf.slice(i, j));
        if (state.role.length > MAX_HEADER) return this.#content(state.raw, j, out);
        if (j === buf.length) return j;
        const match = matchLiteral(buf, j, RECIPIENT);
        if (match === 'partial') return this.holdMarkerStart(buf, j, TO_RECIPIENT);
        if (match === 'none') return this.#content(state.raw, j, out);
        state.raw.add(RECIPIENT);
        this.#state = { kind: 'recipient', raw: state.raw, name: '' };
        return j + RECIPIENT.length;
      }
      case 'recipient': {
        const room = MAX_HEADER + 1 - state.name.length;
        let j = i;
        while (j < buf.length && j - i < room && isNameChar(buf.charCodeAt(j))) j++;
        state.name += buf.slice(i, j);
        state.raw.add(buf.slice(i, j));
        if (state.name.length > MAX_HEADER) return this.#content(state.raw, j, out);
        if (j === buf.length) return j;
        if (buf[j] !== '\n' || state.name.length === 0) return this.#content(state.raw, j, out);
        state.raw.add('\n');
        this.#state = { kind: 'content-marker', raw: state.raw, name: state.name };
        return j + 1;
      }
      case 'content-marker': {
        const match = matchLiteral(buf, i, CONTENT);
        if (match === 'partial') return this.holdMarkerStart(buf, i, TO_CONTENT);
        if (match === 'none') return this.#content(state.raw, i, out);
        if (state.name === 'all') {
          this.#state = { kind: 'content' };
          return i + CONTENT.length;
        }
        state.raw.add(CONTENT);
        const raw = state.raw;
        const rejection = this.#registry.rejection(state.name);
        if (rejection !== undefined) return this.#broken(raw, undefined, rejection, i + CONTENT.length, out);
        const callId = this.#registry.nextCallId();
        out.push({ type: 'call-start', callId, name: state.name });
        this.#state = { kind: 'body', raw, body: new ToolBody(callId, state.name, this.#registry, this.#codeTools) };
        return i + CONTENT.length;
      }
      case 'content': {
        const found = this.scanFor(buf, i, BODY_ENDS);
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        this.#afterBody(found.marker);
        return found.next;
      }
      case 'body': {
        const body = state.body;
        if (body.kind === 'before') {
          const j = body.begin(buf, i, out);
          state.raw.add(buf.slice(i, j));
          return j;
        }
        const code = body.code;
        if (code) {
          const found = this.scanFor(buf, i, BODY_ENDS);
          code.write(found.before, out);
          if (found.marker === undefined) return buf.length;
          code.finish(out);
          this.#afterBody(found.marker);
          return found.next;
        }
        const args = body.json!;
        const stop = args.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (args.status === 'failed') return this.#broken(state.raw, body.callId, args.failure, stop, out);
        if (args.status === 'complete') this.#state = { kind: 'after-call', raw: state.raw, body, ws: '' };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        const from = matchLiteral(buf, j, FROM);
        const stop = matchLiteral(buf, j, STOP);
        if (from === 'partial' || stop === 'partial') return this.holdMarkerStart(buf, j, AFTER_ARGS);
        if (from === 'none' && stop === 'none') return this.#broken(state.raw, state.body.callId, `expected ${FROM} or ${STOP} after the arguments`, j, out);
        out.push({ type: 'call-end', callId: state.body.callId, args: state.body.json!.args });
        // The whitespace goes with a header (out as text if it does not parse, as after other bodies).
        this.#afterBody(from === 'full' ? state.ws + FROM : STOP);
        return j + (from === 'full' ? FROM.length : STOP.length);
      }
    }
  }

  protected override laneState(): State {
    return this.#state;
  }

  protected override laneTarget(state: State): LaneTarget | undefined {
    return state.kind === 'body' && state.body.json ? { writer: state.body.json, raw: state.raw } : undefined;
  }

  protected finish(pending: string, out: EventList, cut: boolean): void {
    const state = this.#state;
    this.#state = { kind: 'content' };
    switch (state.kind) {
      case 'start':
      case 'content':
        out.text(pending);
        return;
      case 'from':
      case 'recipient':
      case 'content-marker':
        out.text(state.raw.text + pending);
        return;
      case 'body': {
        const code = state.body.code;
        if (code) {
          code.write(pending, out);
          // Cut by the token limit: raw code has no end of its own to say it was finished, and
          // its last line is likely half a statement, so the call is not run (see RawCodeCall).
          if (cut) {
            state.raw.add(code.written);
            this.#broken(state.raw, state.body.callId, 'truncated call', 0, out);
          } else code.finish(out);
          return;
        }
        const args = state.body.json;
        if (args) args.end();
        state.raw.add(pending);
        this.#broken(state.raw, state.body.callId, args ? args.failure : 'truncated: no arguments', 0, out);
        return;
      }
      case 'after-call':
        out.push({ type: 'call-end', callId: state.body.callId, args: state.body.json!.args });
        // A cut <|stop|> is the call's frame, as the whole one is; a cut next header (`<|fr`, or
        // `<|`, which may be either) is the model's text, with the whitespace before it, as a
        // header that does not parse is.
        if (pending !== '' && FROM.startsWith(pending)) out.text(state.ws + pending);
        return;
    }
  }

  /** After a body's end marker: a new message's header, or (after <|stop|>) plain content. */
  #afterBody(marker: string): void {
    this.#state = marker.endsWith(FROM) ? { kind: 'from', raw: new RawText(marker), role: '' } : { kind: 'content' };
  }

  /** A header that did not parse: content. */
  #content(raw: RawText, resumeAt: number, out: EventList): number {
    out.text(raw.text);
    this.#state = { kind: 'content' };
    return resumeAt;
  }

  #broken(raw: RawText, callId: string | undefined, reason: string, resumeAt: number, out: EventList): number {
    out.push(callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId, reason });
    out.text(raw.text);
    this.#state = { kind: 'content' };
    return resumeAt;
  }
}

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

function isRoleChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 32 || c === 9 || c === 10 || c === 13 || c === 95;
}
