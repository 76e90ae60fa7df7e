import type { z } from 'zod';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { LeadingWhitespace } from './leading-whitespace.ts';
import { parseParserOptions } from './parser-options.ts';
import { Qwen3CoderCall } from './qwen3-coder-call.ts';
import { Qwen3CoderParserOptionsSchema, type Qwen3CoderParserOptions } from './qwen3-coder-options.ts';
import type { Qwen3CallOpening } from './qwen3-call-opening.ts';
import { FUNCTION, FUNCTION_END, leadingSpace, PARAMETER, PARAMETER_END, TOOL_CALL_END } from './qwen3-function-opener.ts';
import { Qwen3OpenParameter } from './qwen3-open-parameter.ts';
import { Qwen3ProseScanner } from './qwen3-prose-scanner.ts';
import { Qwen3TagName } from './qwen3-tag-name.ts';
import { parameterTypes } from './schema-typed-value.ts';

export { Qwen3CoderParserOptionsSchema, type Qwen3CoderParserOptions } from './qwen3-coder-options.ts';

const BODY_MARKERS = [PARAMETER, FUNCTION_END, TOOL_CALL_END];
const BETWEEN_MARKERS = [FUNCTION, TOOL_CALL_END];

/** `opening`: after `<tool_call>`, or at a bare `<function=` (#opening says which, and how far). */
type Mode = 'prose' | 'opening' | 'function-name' | 'body' | 'parameter-name' | 'value' | 'between';

/**
 * Qwen3-Coder's XML tool calls (vLLM's `qwen3_coder` parser):
 * `<tool_call>\n<function=name>\n<parameter=p>\nvalue\n</parameter>\n…</function>\n</tool_call>`.
 *
 * A call starts (`call-start`) at the `>` of `<function=name>`, if `<tool_call>` is followed by
 * nothing but whitespace and that; otherwise `<tool_call>` was prose and is released as text.
 * Without `<tool_call>` (Qwen3-Coder drops it), `<function=name>` starts a call at the
 * `<parameter=` or `</function>` after it, and an orphan `</tool_call>` after the call is frame.
 * A parameter value is raw text up to `</parameter>` (or, as vLLM tolerates, the next
 * `<parameter=`, `</function>` or `</tool_call>`), minus one leading and one trailing "\n";
 * the marker ends it only if what follows is structure too (Qwen3ValueEnd), else it is text
 * of the value. Once that is certain come a `field` piece {path: [name], value} and a
 * `call-args` fragment (Qwen3CoderCall): values are converted with the tool's schema types
 * when `toolDefinitions` are given, else strings, and `call-args` is JSON built one parameter
 * at a time.
 * The `lineFields` parameter of a tool (code) also yields a `line` piece per completed line
 * while it streams; a line is certain once a character after its "\n" is (the value's last
 * "\n" is not its own), and the lines concatenate to the final value.
 * `call-end` comes at `</function>` (or `</tool_call>`), or at `end()` when the output ended
 * (EOS, not cut) after a parameter's `</parameter>`; several functions may share a block.
 * Whitespace inside the block is not content; a function body holding anything but
 * parameters, or cut off by `end(true)`, is `malformed` (no `call-end`), after which the raw text
 * since the last finished call is released as content and scanning resumes as prose.
 */
export function createQwen3CoderParser(options: Qwen3CoderParserOptions = {}): ToolCallParser {
  return new Qwen3CoderParser(parseParserOptions(Qwen3CoderParserOptionsSchema, options, 'qwen3-coder'));
}

class Qwen3CoderParser implements ToolCallParser {
  readonly #types;
  readonly #lineFields: Record<string, string>;
  readonly #prefix: string;
  readonly #out = new EventOutput();
  readonly #leading = new LeadingWhitespace();
  readonly #proseScanner: Qwen3ProseScanner;
  #mode: Mode = 'prose';
  /** Input not decided yet (a possible marker), processed again with the next delta. */
  #held = '';
  /** Text consumed since the last finished call, released as content if the call fails. */
  #raw = '';
  #call: Qwen3CoderCall | undefined;
  /** The function or parameter name being read. */
  readonly #name = new Qwen3TagName();
  #opening: Qwen3CallOpening | undefined;
  #parameter: Qwen3OpenParameter | undefined;
  #calls = 0;
  #ended = false;

  constructor(options: z.output<typeof Qwen3CoderParserOptionsSchema>) {
    this.#types = parameterTypes(options.toolDefinitions);
    this.#lineFields = options.lineFields;
    this.#prefix = options.callIdPrefix;
    this.#proseScanner = new Qwen3ProseScanner(this.#out, (name) => this.#types.size === 0 || this.#types.has(name));
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
    // The model ended (EOS) after a function's last </parameter>, its </function> never written:
    // the call is what it wrote, as vLLM's qwen3_coder reads it. Cut by the token limit or a stop
    // string it was unfinished, and so is a value never closed (vLLM would run the call with the
    // value up to the end): malformed, below.
    if (!cut && this.#call !== undefined && this.#mode === 'body') {
      this.#endCall();
      this.#mode = 'prose';
    }
    switch (this.#mode) {
      case 'prose':
        break;
      case 'opening':
        if (this.#opening!.afterToolCall) this.#fail('the output ended inside <tool_call> before a function name');
        // A bare <function= never showed a body.
        else this.#out.text(this.#raw);
        break;
      case 'between':
        // Every call has ended and only </tool_call> is missing: whitespace alone is frame, as after it.
        if (leadingSpace(this.#raw) !== this.#raw.length) this.#out.text(this.#raw);
        break;
      default:
        this.#fail(`the output ended inside ${this.#call ? `the call to ${this.#call.name}` : '<tool_call>'}`);
    }
    const events = this.#out.take(true);
    return this.#leading.deciding ? this.#leading.filter(events, true) : events;
  }

  #run(delta: string, final: boolean): void {
    let input = this.#held + delta;
    this.#held = '';
    // At the end a value may still hold a marker, with no input left to decide it.
    while (input !== '' || (final && this.#parameter?.holds === true)) {
      const rest = this.#step(input, final);
      if (rest === undefined) {
        // Undecided: wait for more text (at the end, `end()` settles it).
        if (!final) this.#held = input;
        else this.#raw += input;
        return;
      }
      input = rest;
    }
  }

  /**
   * Consumes a prefix of `input` and returns the rest; undefined means all of `input` is
   * undecided (prose and values keep their own undecided tail in `#held` and return '').
   */
  #step(input: string, final: boolean): string | undefined {
    switch (this.#mode) {
      case 'prose': {
        const scan = this.#proseScanner.scan(input, final);
        if (scan.kind === 'text') {
          this.#held = scan.held;
          return '';
        }
        this.#mode = 'opening';
        this.#opening = scan.opening;
        this.#raw = scan.frame;
        return scan.rest;
      }
      case 'opening':
        return this.#openingText(input);
      case 'function-name':
      case 'parameter-name':
        return this.#readName(input);
      case 'body':
      case 'between': {
        const space = this.#space(input);
        if (space !== undefined) return space;
        const at = input;
        const markers = this.#mode === 'body' ? BODY_MARKERS : BETWEEN_MARKERS;
        const marker = markers.find((m) => at.startsWith(m));
        if (marker !== undefined) {
          this.#raw += marker;
          this.#marker(marker);
          return at.slice(marker.length);
        }
        if (markers.some((m) => m.startsWith(at))) return undefined;
        if (this.#mode === 'body') {
          // The reason names only the first character: how much more has arrived depends on the split.
          this.#fail(`unexpected text inside <function=${this.#call!.name}> at ${JSON.stringify(at[0])}`);
          return at;
        }
        // No </tool_call> after the last function: the block is over, and what follows is content.
        return this.#prose(this.#raw, at);
      }
      case 'value':
        return this.#valueText(input, final);
    }
  }

  #openingText(input: string): string | undefined {
    const step = this.#opening!.step(input);
    switch (step.kind) {
      case 'more':
        return undefined;
      case 'frame':
        this.#raw += step.frame;
        return step.rest;
      case 'call':
        this.#raw += step.frame;
        this.#startCall(step.name);
        return step.rest;
      case 'prose':
        return this.#prose(step.marker === undefined ? this.#raw : this.#raw + step.marker, step.rest);
    }
  }

  /** Whitespace at the start of `input` taken into the frame: the rest, or undefined if there was none. */
  #space(input: string): string | undefined {
    const space = leadingSpace(input);
    if (space === 0) return undefined;
    this.#raw += input.slice(0, space);
    return input.slice(space);
  }

  /** What looked like a frame was prose: `text` is content, and `rest` is scanned as prose. */
  #prose(text: string, rest: string): string {
    this.#out.text(text);
    this.#raw = '';
    this.#mode = 'prose';
    return rest;
  }

  #readName(input: string): string | undefined {
    const read = this.#name.read(input);
    if (read.kind === 'more') {
      this.#raw += input;
      return '';
    }
    if (read.kind === 'invalid') {
      const what = this.#mode === 'function-name' ? 'function' : 'parameter';
      this.#raw += input.slice(0, read.at);
      this.#fail(`invalid ${what} name ${JSON.stringify(read.name)}`);
      return input.slice(read.at);
    }
    const { name, close } = read;
    if (this.#mode === 'parameter-name' && this.#call!.has(name)) {
      // Plugins already had its first value (ran its code): as a key repeated in JSON arguments.
      this.#raw += input.slice(0, close);
      this.#fail(`parameter ${JSON.stringify(name)} repeated`);
      return input.slice(close);
    }
    this.#raw += input.slice(0, close + 1);
    if (this.#mode === 'function-name') {
      this.#startCall(name);
    } else {
      this.#mode = 'value';
      this.#parameter = new Qwen3OpenParameter(name, this.#call!);
    }
    return input.slice(close + 1);
  }

  #valueText(input: string, final: boolean): string {
    const step = this.#parameter!.push(input, final);
    this.#raw += step.text;
    if (step.kind === 'more') return '';
    this.#raw += step.marker;
    this.#parameter = undefined;
    this.#marker(step.marker);
    return step.rest;
  }

  /** A complete marker has been consumed in body, between or value mode. */
  #marker(marker: string): void {
    switch (marker) {
      case PARAMETER:
        this.#mode = 'parameter-name';
        return;
      case PARAMETER_END:
        this.#mode = 'body';
        return;
      case FUNCTION:
        this.#mode = 'function-name';
        return;
      case FUNCTION_END:
        this.#endCall();
        this.#mode = 'between';
        return;
      case TOOL_CALL_END:
        if (this.#call !== undefined) this.#endCall();
        this.#raw = '';
        this.#mode = 'prose';
        this.#proseScanner.blockClosed();
        return;
    }
  }

  #startCall(name: string): void {
    this.#calls += 1;
    this.#call = new Qwen3CoderCall(`${this.#prefix}${this.#calls}`, name, this.#types.get(name), this.#lineFields, this.#out);
    this.#mode = 'body';
  }

  #endCall(): void {
    this.#call!.end();
    this.#call = undefined;
    this.#raw = '';
  }

  #fail(reason: string): void {
    const callId = this.#call?.callId;
    const message = `qwen3-coder: ${reason}`;
    this.#out.event(callId === undefined ? { type: 'malformed', reason: message } : { type: 'malformed', callId, reason: message });
    this.#call = undefined;
    this.#name.reset();
    this.#parameter = undefined;
    this.#prose(this.#raw, '');
  }
}
