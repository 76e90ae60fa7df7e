import { z } from 'zod';
import { searchMarkers } from '../marker-search.ts';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { LeadingWhitespace } from './leading-whitespace.ts';
import { LLAMA3_END_TOKENS, LLAMA3_PYTHON_TAG } from './llama3-special-tokens.ts';
import { parseParserOptions } from './parser-options.ts';

export const PythonTagParserOptionsSchema = z
  .object({
    /** The tool each call goes to. */
    toolName: z.string().min(1).default('python'),
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
    /** The token that opens raw code. */
    tag: z.string().min(1).default(LLAMA3_PYTHON_TAG),
    /** Tokens that end the code (Llama 3.1: end of message, expecting a tool result; end of turn). */
    endTokens: z.array(z.string().min(1)).min(1).default([...LLAMA3_END_TOKENS]),
  })
  .strict();

export type PythonTagParserOptions = z.input<typeof PythonTagParserOptionsSchema>;

/**
 * Llama 3.1/3.2/3.3 code interpreter output: `<|python_tag|>` then raw Python until
 * `<|eom_id|>` / `<|eot_id|>` (or the end of the output: these are stop tokens an engine
 * usually strips). The code after the tag, exactly, is one call to `toolName`:
 * - `call-start` at the first character after the tag (and any whitespace) that is not `{`:
 *   `<|python_tag|>{…}` is Llama's JSON tool call, which the llama3_json parser owns; here it
 *   is not a call, and the tag and what follows are released as content unchanged;
 * - the whitespace between the tag and the code's first character is not code: run as written,
 *   `<|python_tag|> print(1)` is an IndentationError ("unexpected indent"); only that leading run
 *   goes (and the tag repeated among it), indentation inside the code is the model's;
 * - a `line` piece per code line, at its "\n"; the last line (without "\n") at the end token
 *   or `end()`; `call-args` carries the arguments as JSON, `{"code":"` then each line's
 *   JSON-escaped text with its piece, `"}` at the end, so it concatenates to
 *   `JSON.stringify({code})`;
 * - `call-end` {code} at the end token (dropped, never content) or at `end()`; at `end(true)`
 *   (the token limit cut the output) an open call is `malformed`, its text released as content;
 * - an end token outside a call is dropped too: it ends the message wherever it stands (an engine
 *   that passes it on writes it after a plain answer as well), so it is never an answer, as in
 *   the llama3-json format; text after one is still content;
 * - whitespace after a call's end token is frame unless text follows it ('trailing'), as in
 *   llama3-json: `<|python_tag|>print(1)<|eom_id|>\n` is a call and no content.
 * Built-in tool calls such as `brave_search.call(query="…")` are Python too and arrive as
 * code. Everything else outside the tag's code is content, unchanged.
 */
export function createPythonTagParser(options: PythonTagParserOptions = {}): ToolCallParser {
  return new PythonTagParser(parseParserOptions(PythonTagParserOptionsSchema, options, 'python-tag'));
}

interface OpenCall {
  callId: string;
  /** The whitespace between the previous call's end token and the tag: released with the text if the call is cut. */
  before: string;
  /** The whitespace after the tag, not code: kept only to give the model's text back if the call is cut. */
  lead: string;
  code: string;
  line: string;
  lineNo: number;
}

class PythonTagParser implements ToolCallParser {
  readonly #options: z.output<typeof PythonTagParserOptionsSchema>;
  /** What prose is searched for: the tag, and the end tokens, which are dropped there. */
  readonly #proseMarkers: readonly string[];
  readonly #out = new EventOutput();
  readonly #leading = new LeadingWhitespace();
  /**
   * 'trailing': after a call's end token, before any text. The whitespace there (`#trail`) is held:
   * a content delta of whitespace alone reads to an OpenAI client as an empty-looking message, and
   * the "\n" a model writes after `<|eom_id|>` is formatting. It is dropped at the end (through end
   * tokens, dropped themselves), the frame of a next call's tag (out with the tag if that is text),
   * and out unchanged in front of the first text that follows, so none is lost.
   */
  #mode: 'prose' | 'trailing' | 'after-tag' | 'code' = 'prose';
  #trail = '';
  /** Input not decided yet: a possible marker. */
  #held = '';
  /**
   * The whitespace after the tag so far, kept apart from `#held`: held, it was read again with
   * every delta, and a model that runs into whitespace there cost time quadratic in its length.
   */
  #space = '';
  #call: OpenCall | undefined;
  #calls = 0;
  #ended = false;

  constructor(options: z.output<typeof PythonTagParserOptionsSchema>) {
    this.#options = options;
    this.#proseMarkers = [options.tag, ...options.endTokens];
  }

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    this.#run(delta, false);
    const events = this.#out.take();
    return this.#leading.deciding ? this.#leading.filter(events, false) : events;
  }

  end(cut = false): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#run('', true);
    // The token limit (or a stop string) cut the code: its last line is likely half a statement
    // (`limit = 5` of `limit = 500`), and no end token says the model had finished, so the call
    // is not run. Its text goes out as the model wrote it, as in every other format.
    if (cut && (this.#mode === 'after-tag' || this.#mode === 'code')) {
      const call = this.#call;
      const before = call === undefined ? this.#trail : call.before;
      const code = call === undefined ? this.#space : call.lead + call.code + call.line;
      this.#out.event(call === undefined ? { type: 'malformed', reason: 'truncated call' } : { type: 'malformed', callId: call.callId, reason: 'truncated call' });
      this.#out.text(before + this.#options.tag + code);
      this.#call = undefined;
      this.#space = '';
      this.#trail = '';
      this.#mode = 'prose';
    }
    if (this.#mode === 'after-tag') {
      // Only whitespace followed the tag: still a call, as the tag promised, with no code.
      this.#start(this.#space);
      this.#space = '';
    }
    if (this.#call !== undefined) this.#endCall();
    const events = this.#out.take(true);
    return this.#leading.deciding ? this.#leading.filter(events, true) : events;
  }

  #run(delta: string, final: boolean): void {
    let input = this.#held + delta;
    this.#held = '';
    while (input !== '') {
      if (this.#mode === 'prose') input = this.#prose(input, final);
      else if (this.#mode === 'trailing') input = this.#trailing(input, final);
      else if (this.#mode === 'after-tag') input = this.#afterTag(input, final);
      else input = this.#code(input, final);
    }
  }

  #prose(input: string, final: boolean): string {
    const found = searchMarkers(input, this.#proseMarkers);
    if (!found.found) {
      const holdFrom = final ? input.length : found.holdFrom;
      this.#out.text(input.slice(0, holdFrom));
      this.#held = input.slice(holdFrom);
      return '';
    }
    this.#out.text(input.slice(0, found.index));
    if (found.marker !== this.#options.tag) return input.slice(found.index + found.marker.length);
    this.#mode = 'after-tag';
    return input.slice(found.index + found.marker.length);
  }

  /** `input` follows a call's end token, and the whitespace after it so far (`#trail`). */
  #trailing(input: string, final: boolean): string {
    let i = 0;
    while (i < input.length && isSpace(input[i]!)) i++;
    this.#trail += input.slice(0, i);
    const rest = input.slice(i);
    if (rest === '') return '';
    const found = searchMarkers(rest, this.#proseMarkers);
    if (found.found && found.index === 0) {
      // An end token is dropped and decides nothing; a tag takes the whitespace as its frame.
      if (found.marker === this.#options.tag) this.#mode = 'after-tag';
      return rest.slice(found.marker.length);
    }
    if (!found.found && found.holdFrom === 0 && !final) {
      this.#held = rest;
      return '';
    }
    this.#out.text(this.#trail);
    this.#trail = '';
    this.#mode = 'prose';
    return rest;
  }

  /** `input` follows the tag and the whitespace after it so far (`#space`). */
  #afterTag(input: string, final: boolean): string {
    let i = 0;
    while (i < input.length && isSpace(input[i]!)) i++;
    this.#space += input.slice(0, i);
    if (i === input.length) return '';
    // The tag again before any code (`<|python_tag|><|python_tag|>print(1)`) is frame like the
    // whitespace: as code it fails as Python. Kept in `#space` so a cut call reads as written.
    const { tag } = this.#options;
    if (input.startsWith(tag, i)) {
      this.#space += tag;
      return input.slice(i + tag.length);
    }
    if (!final && tag.startsWith(input.slice(i))) {
      this.#held = input.slice(i);
      return '';
    }
    const space = this.#space;
    this.#space = '';
    if (input[i] === '{') {
      this.#out.text(this.#trail + this.#options.tag + space);
      this.#trail = '';
      this.#mode = 'prose';
      return input.slice(i);
    }
    this.#start(space);
    return input.slice(i);
  }

  #start(lead: string): void {
    this.#calls += 1;
    const callId = `${this.#options.callIdPrefix}${this.#calls}`;
    this.#call = { callId, before: this.#trail, lead, code: '', line: '', lineNo: 0 };
    this.#trail = '';
    this.#mode = 'code';
    this.#out.event({ type: 'call-start', callId, name: this.#options.toolName });
    this.#out.event({ type: 'call-args', callId, text: '{"code":"' });
  }

  #code(input: string, final: boolean): string {
    const found = searchMarkers(input, this.#options.endTokens, final);
    const certain = found.found ? found.index : final ? input.length : found.holdFrom;
    let from = 0;
    for (let newline = input.indexOf('\n'); newline !== -1 && newline < certain; newline = input.indexOf('\n', from)) {
      this.#line(input.slice(from, newline + 1));
      from = newline + 1;
    }
    this.#call!.line += input.slice(from, certain);
    if (!found.found) {
      this.#held = input.slice(certain);
      return '';
    }
    this.#endCall();
    this.#mode = 'trailing';
    return input.slice(found.index + found.marker.length);
  }

  #line(rest: string): void {
    const call = this.#call!;
    const text = call.line + rest;
    call.line = '';
    call.lineNo += 1;
    call.code += text;
    this.#out.event({ type: 'call-piece', callId: call.callId, piece: { kind: 'line', text, lineNo: call.lineNo } });
    this.#out.event({ type: 'call-args', callId: call.callId, text: JSON.stringify(text).slice(1, -1) });
  }

  #endCall(): void {
    const call = this.#call!;
    if (call.line !== '') this.#line('');
    this.#out.event({ type: 'call-args', callId: call.callId, text: '"}' });
    this.#out.event({ type: 'call-end', callId: call.callId, args: { code: call.code } });
    this.#call = undefined;
    this.#mode = 'prose';
  }
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}
