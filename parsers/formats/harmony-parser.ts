import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { MarkerSet } from '../marker-search.ts';
import type { ToolCallParser } from '../parser-events.ts';
import { CallOptionsSchema, CallRegistry, parseFormatOptions } from './call-options.ts';
import type { EventList } from './event-list.ts';
import { FormatParser, matchLiteral, RawText, skipWhitespace } from './format-parser.ts';
import type { LaneTarget } from './plain-lane.ts';
import { ToolBody } from './tool-body.ts';

export const HarmonyParserOptionsSchema = CallOptionsSchema.extend({
  /** Recipients whose body may be raw code rather than JSON (gpt-oss's built-in `python`). */
  codeTools: z.array(z.string().min(1)).default(['python']),
}).strict();
export type HarmonyParserOptions = z.input<typeof HarmonyParserOptionsSchema>;

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const END = '<|end|>';
const CALL = '<|call|>';
const RETURN = '<|return|>';
/** A message ends at its end token, or (leniently) where the next message's header begins. */
const MESSAGE_ENDS = new MarkerSet([END, CALL, RETURN, START, CHANNEL]);
const TO_MESSAGE = new MarkerSet([MESSAGE]);
const MAX_HEADER = 512;

type State =
  /** Between messages. */
  | { kind: 'outside' }
  /** Right after an end token: whitespace here (`ws`) is frame unless text follows it. */
  | { kind: 'between'; ws: string }
  /** From <|start|> or <|channel|> up to <|message|>. */
  | { kind: 'header'; header: string }
  | { kind: 'text'; reasoning: boolean }
  | { kind: 'body'; raw: RawText; body: ToolBody }
  /** Complete JSON arguments: only whitespace may come before <|call|> (or <|end|>, <|return|>). */
  | { kind: 'after-call'; raw: RawText; body: ToolBody };

/**
 * gpt-oss harmony: `<|channel|>analysis<|message|>…<|end|>` is reasoning;
 * `<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`
 * is a call (the recipient may also sit before <|channel|>; `functions.` is dropped from the
 * name; a `codeTools` recipient such as `python` takes raw code); `<|channel|>final<|message|>…`
 * and commentary without a recipient are content. Headers and end tokens are frame. The upstream
 * must keep special tokens in the text (vLLM: `skip_special_tokens: false`).
 * A call ends at <|call|>/<|end|>/<|return|>, the next header, or end(); other text after its
 * arguments makes it `malformed`, released as text (header included). A header never closed by
 * <|message|> is released as text.
 */
export function createHarmonyParser(options: HarmonyParserOptions = {}): ToolCallParser {
  return new HarmonyParser(parseFormatOptions(HarmonyParserOptionsSchema, options, 'harmony'));
}

class HarmonyParser extends FormatParser {
  readonly #registry: CallRegistry;
  readonly #codeTools: readonly string[];
  #state: State = { kind: 'outside' };

  constructor(options: z.output<typeof HarmonyParserOptionsSchema>) {
    super();
    this.#registry = new CallRegistry(options);
    this.#codeTools = options.codeTools;
  }

  protected step(buf: string, i: number, out: EventList): number {
    buf = knownString(buf);
    const state = this.#state;
    switch (state.kind) {
      case 'outside': {
        const found = this.scanFor(buf, i, MESSAGE_ENDS);
        out.text(found.before);
        if (found.marker === undefined) return buf.length;
        this.#afterMessage(found.marker);
        return found.next;
      }
      case 'between': {
        // gpt-oss writes nothing between messages; a "\n" that a template or engine adds after
        // <|call|> or <|end|> is formatting, and as content alone it reads as an empty-looking
        // answer. Frame before the next header, an end token or the output's end (as after a
        // hermes </tool_call>); out unchanged with any other text that follows it.
        const j = skipWhitespace(buf, i);
        state.ws += buf.slice(i, j);
        if (j === buf.length) return j;
        let partial = false;
        for (const marker of MESSAGE_ENDS.list) {
          const match = matchLiteral(buf, j, marker);
          if (match === 'full') {
            this.#state = { kind: 'outside' };
            return j;
          }
          partial ||= match === 'partial';
        }
        if (partial) return this.holdMarkerStart(buf, j, MESSAGE_ENDS);
        out.text(state.ws);
        this.#state = { kind: 'outside' };
        return j;
      }
      case 'header': {
        const found = this.scanFor(buf, i, TO_MESSAGE);
        state.header += found.before;
        if (found.marker === undefined) return buf.length;
        // Judged only at <|message|>, so that the verdict does not depend on the split.
        if (state.header.length > MAX_HEADER) {
          out.text(state.header);
          this.#state = { kind: 'outside' };
          return found.next - MESSAGE.length;
        }
        return this.#openMessage(state.header + MESSAGE, found.next, out);
      }
      case 'text': {
        const found = this.scanFor(buf, i, MESSAGE_ENDS);
        if (state.reasoning) out.reasoning(found.before);
        else out.text(found.before);
        if (found.marker === undefined) return buf.length;
        this.#afterMessage(found.marker);
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
          const found = this.scanFor(buf, i, MESSAGE_ENDS);
          code.write(found.before, out);
          if (found.marker === undefined) return buf.length;
          code.finish(out);
          this.#afterMessage(found.marker);
          return found.next;
        }
        const args = body.json!;
        const stop = args.write(buf, i, buf.length, out);
        state.raw.add(buf.slice(i, stop));
        if (args.status === 'failed') return this.#broken(state.raw, body.callId, args.failure, stop, out);
        if (args.status === 'complete') this.#state = { kind: 'after-call', raw: state.raw, body };
        return stop;
      }
      case 'after-call': {
        const j = skipWhitespace(buf, i);
        state.raw.add(buf.slice(i, j));
        if (j === buf.length) return j;
        let partial = false;
        for (const marker of MESSAGE_ENDS.list) {
          const match = matchLiteral(buf, j, marker);
          if (match === 'full') {
            out.push({ type: 'call-end', callId: state.body.callId, args: state.body.json!.args });
            this.#afterMessage(marker);
            return j + marker.length;
          }
          partial ||= match === 'partial';
        }
        if (partial) return this.holdMarkerStart(buf, j, MESSAGE_ENDS);
        return this.#broken(state.raw, state.body.callId, `expected ${CALL} after the arguments`, j, out);
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
    this.#state = { kind: 'outside' };
    switch (state.kind) {
      case 'outside':
        out.text(pending);
        return;
      case 'between':
        // A cut marker at the end is text, as in 'outside', and the whitespace goes out with it.
        if (pending !== '') out.text(state.ws + pending);
        return;
      case 'header':
        out.text(state.header + pending);
        return;
      case 'text':
        if (state.reasoning) out.reasoning(pending);
        else out.text(pending);
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
        // A cut <|call|> (or <|end|>, <|return|>) is the call's frame, as the whole one is; a cut
        // next header (`<|sta`, `<|chan`, or `<|`, which may be either) is text, as a whole
        // header never closed by <|message|> is.
        if (pending !== '' && (START.startsWith(pending) || CHANNEL.startsWith(pending))) out.text(pending);
        return;
    }
  }

  #afterMessage(marker: string): void {
    this.#state = marker === START || marker === CHANNEL ? { kind: 'header', header: marker } : { kind: 'between', ws: '' };
  }

  /** The header is complete: route the message by its recipient and channel. */
  #openMessage(header: string, next: number, out: EventList): number {
    const recipient = headerValue(header, 'to=');
    if (recipient === undefined) {
      this.#state = { kind: 'text', reasoning: headerValue(header, CHANNEL) === 'analysis' };
      return next;
    }
    const name = recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : recipient;
    const rejection = this.#registry.rejection(name);
    if (rejection !== undefined) return this.#broken(new RawText(header), undefined, rejection, next, out);
    const callId = this.#registry.nextCallId();
    out.push({ type: 'call-start', callId, name });
    this.#state = { kind: 'body', raw: new RawText(header), body: new ToolBody(callId, name, this.#registry, this.#codeTools) };
    return next;
  }

  #broken(raw: RawText, callId: string | undefined, reason: string, resumeAt: number, out: EventList): number {
    out.push(callId === undefined ? { type: 'malformed', reason } : { type: 'malformed', callId, reason });
    out.text(raw.text);
    this.#state = { kind: 'outside' };
    return resumeAt;
  }
}

/** The word after `key` in a header (up to whitespace or the next token), if present. */
function headerValue(header: string, key: string): string | undefined {
  const at = header.indexOf(key);
  if (at < 0) return undefined;
  let end = at + key.length;
  while (end < header.length && !' \t\n<'.includes(header[end]!)) end++;
  return header.slice(at + key.length, end);
}
