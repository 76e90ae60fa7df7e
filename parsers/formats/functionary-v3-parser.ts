import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import type { LaneTarget } from './plain-lane.ts';
import { ToolBody } from './tool-body.ts';

export const FunctionaryV3ParserOptionsSchema = CallOptionsSchema.extend({
  /** Tools whose body may be raw code rather than JSON (Functionary's code interpreter). */
  codeTools: z.array(z.string().min(1)).default(['python']),
}).strict();
export type FunctionaryV3ParserOptions = z.input<typeof FunctionaryV3ParserOptionsSchema>;

const SEGMENT = '>>>';
const MAX_RECIPIENT = 128;
const SEGMENTS = new MarkerSet([SEGMENT]);
/**
 * What ends a content or raw-code body. Functionary's own v3 parser strips each segment, so the
 * "\n" a model writes before ">>>" (its template joins segments with nothing) is neither content
 * nor code, as the "\n" before <|from|> in v2: frame if a recipient line follows, text with the
 * ">>>" if that turns out to be text.
 */
const BODY_ENDS = new MarkerSet([`\n${SEGMENT}`, SEGMENT]);

type CodeBody = { kind: 'body'; raw: RawText; body: ToolBody };

type State =
  /** The very start: the prompt usually ends with ">>>", so a recipient line may come first. */
  | { kind: 'start' }
  /**
   * `segment`: after ">>>" (rather than at the very start). `ws`: whitespace after a call before
   * it, frame if a recipient line follows, text (first in `raw`) if the ">>>" turns out to be.
   * `code`: the raw-code body this ">>>" came in, which it ends only if a recipient line follows
   * (else `raw` is more of that code).
   */
  | { kind: 'recipient'; raw: RawText; name: string; segment: boolean; ws: string; code?: CodeBody }
  | { kind: 'content' }
  | { kind: 'body'; raw: RawText; body: ToolBody }
  /** Complete JSON arguments; the call ends at the next ">>>", other text, or end(). */
  | { kind: 'after-call'; body: ToolBody; ws: string };

/**
 * Functionary v3 (v3.2 template): segments `>>>RECIPIENT\nBODY`, where recipient `all` is content
 * for the user and any other name is a call whose body is JSON arguments (or raw code for
 * `codeTools`). The prompt ends with ">>>", so the output starts with a recipient line (a leading
 * ">>>" is accepted too); output that does not is plain content.
 * ">>>" not followed by a name (`[\w.-]+`) and "\n" is text (`>>> print(x)` in prose stays prose).
 * A JSON call ends at the next ">>>", at end(), or at other text after it (then content); whitespace
 * before ">>>" is frame, unless that ">>>" is text or a broken call, which it goes out with. A
 * raw-code body runs to the next ">>>" recipient line or end(); after it and after content, a "\n"
 * before ">>>" is frame in the same way (BODY_ENDS). A ">>>" in code that starts no recipient line
 * is code, as it is text in content (a doctest `>>> add(1, 2)`, `print(">>>")`): cut there, the
 * code would run its first half and the rest be content. Functionary's own parser splits at every
 * ">>>", in prose too, where it has always been text here.
 */
export function createFunctionaryV3Parser(options: FunctionaryV3ParserOptions = {}): ToolCallParser {
  return new FunctionaryV3Parser(parseFormatOptions(FunctionaryV3ParserOptionsSchema, options, 'functionary_v3'));
}

class FunctionaryV3Parser extends FormatParser {
  readonly #registry: CallRegistry;
  readonly #codeTools: readonly string[];
  #state: State = { kind: 'start' };

  constructor(options: z.output<typeof FunctionaryV3ParserOptionsSchema>) {
    super();
    this.#registry = new CallRegistry(options);
    this.#codeTools = options.codeTools;
  }

  protected step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'start': {
        const lead = matchLiteral(buf, i, SEGMENT);
        if (lead === 'partial') return this.holdMarkerStart(buf, i, SEGMENTS);
        this.#state = { kind: 'recipient', raw: new RawText(lead === 'full' ? SEGMENT : ''), name: '', segment: lead === 'full', ws: '' };
        return lead === 'full' ? i + SEGMENT.length : i;
      }
      case 'recipient': {
        if (state.name.length === 0 && state.segment && buf[i] === '>') {
          // ">>>>" : the segment marker is the last three ">", the first is text (after the
          // whitespace before it, which is text with it), or code.
          if (state.code) state.code.body.code!.write(state.ws + '>', out);
          else out.text(state.ws + '>');
          state.ws = '';
          state.raw = new RawText(SEGMENT);
          return i + 1;
        }
        // Bounded so that an overlong name fails at the same character however the text is split.
        const room = MAX_RECIPIENT + 1 - state.name.length;
        let j = i;
        while (j < buf.length && j - i < room && isNameChar(buf.charCodeAt(j))) j++;
        state.name += buf.slice(i, j);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length && state.name.length <= MAX_RECIPIENT) return j;
        if (state.name.length > MAX_RECIPIENT || buf[j] !== '\n' || state.name.length === 0) {
          if (state.code) {
            state.code.body.code!.write(state.raw.text, out);
            this.#state = state.code;
            return j;
          }
          out.text(state.raw.text);
          this.#state = { kind: 'content' };
          return j;
        }
        state.code?.body.code!.finish(out);
        if (state.name === 'all') {
          this.#state = { kind: 'content' };
          return j + 1;
        }
        state.raw.add('\n');
        const raw = state.raw;
        const rejection = this.#registry.rejection(state.name);
        if (rejection !== undefined) return this.#broken(raw, undefined, rejection, j + 1, out);
        const callId = this.#registry.nextCallId();
        out.push({ type: 'call-start', callId, name: state.name });
        this.#state = { kind: 'body', raw, body: new ToolBody(callId, state.name, this.#registry, this.#codeTools) };
        return j + 1;
      }
      case 'content': {
        const found = this.scanFor(buf, i, BODY_ENDS);
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        this.#state = afterBody(found.marker);
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
          this.#state = afterBody(found.marker, state);
          return found.next;
        }
        const args = body.json!;
        const stop = args.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (args.status === 'failed') return this.#broken(state.raw, body.callId, args.failure, stop, out);
        if (args.status === 'complete') this.#state = { kind: 'after-call', body, ws: '' };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        const next = matchLiteral(buf, j, SEGMENT);
        if (next === 'partial') return this.holdMarkerStart(buf, j, SEGMENTS);
        out.push({ type: 'call-end', callId: state.body.callId, args: state.body.json!.args });
        if (next === 'full') {
          this.#state = { kind: 'recipient', raw: new RawText(state.ws + SEGMENT), name: '', segment: true, ws: state.ws };
          return j + SEGMENT.length;
        }
        out.text(state.ws);
        this.#state = { kind: 'content' };
        return j;
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
    let state = this.#state;
    // A ">>>" the end cut before its recipient line: more of the code it came in.
    if (state.kind === 'recipient' && state.code) {
      state.code.body.code!.write(state.raw.text, out);
      state = state.code;
    }
    this.#state = { kind: 'content' };
    switch (state.kind) {
      case 'start':
      case 'content':
        out.text(pending);
        return;
      case 'recipient':
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
        out.text(state.ws + pending);
        return;
    }
  }

  #broken(raw: RawText, callId: string | undefined, reason: string, resumeAt: number, out: EventList): number {
    out.push(callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId, reason });
    out.text(raw.text);
    this.#state = { kind: 'content' };
    return resumeAt;
  }
}

/** After a body's end marker (BODY_ENDS): its "\n", if any, waits on the recipient line, and so does the code it may end. */
function afterBody(marker: string, code?: CodeBody): State {
  const ws = marker.slice(0, marker.length - SEGMENT.length);
  return { kind: 'recipient', raw: new RawText(marker), name: '', segment: true, ws, code };
}

/** `\w` as Functionary's templates use it, plus "-" and "." which OpenAI tool names may hold. */
function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}
