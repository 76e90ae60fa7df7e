import { z } from 'zod';
import { searchMarkers } from '../marker-search.ts';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { parseParserOptions } from './parser-options.ts';
import { PythonLexer, PythonSyntaxError, type PythonToken } from './python-literal-lexer.ts';
import { PythonValueParser, setOwn } from './python-value-parser.ts';
import { PythonicCandidate } from './pythonic-candidate.ts';

export const PythonicParserOptionsSchema = z
  .object({
    /** Call ids are this prefix plus a per-parser counter (1, 2, …), so they are deterministic. */
    callIdPrefix: z.string().default('call_'),
    /** Special tokens wrapped around the list (Llama 4): dropped wherever they stand outside a list. */
    wrapperTokens: z.array(z.string().min(1)).default(['<|python_start|>', '<|python_end|>']),
  })
  .strict();

export type PythonicParserOptions = z.input<typeof PythonicParserOptionsSchema>;

/**
 * Pythonic tool calls (Llama 3.2/4 and others; vLLM's and SGLang's `pythonic` parsers):
 * `[get_weather(city="Paris"), f(x=1)]`, a Python list of calls with literal keyword arguments.
 *
 * When a `[` starts a call list: only at the start of a line (the output's start, after a
 * newline or a wrapper token, spaces and tabs aside), and only once the text reads `[name(`
 * followed by `kw=` or `)` (whitespace allowed between the tokens). A call list inside a sentence
 * ("You could call [search(query="x")] yourself") is the model talking about a call, not making
 * one: vLLM's parser goes further and takes a list only at the very start of the output, which
 * misses a model's calls after a line of preamble. Until then the text from `[` is held; as soon as it
 * can no longer read that way, the `[` is released as text and scanning resumes after it, so
 * prose such as "[1]", "[see below]" or "[f(x), f(y)]" (positional) is content, unchanged.
 *
 * Events, each at the character where it becomes certain:
 * - `call-start` at that committing character for the first call, at `(` for the next ones;
 * - per keyword argument, at the `,` or `)` that ends its value (only then is the value
 *   certain: "a" "b" is one string in Python): a `field` piece {path: [name], value} and a
 *   `call-args` fragment; `call-args` carries JSON, not the model's Python, since the client
 *   needs JSON: `{"city":"Paris"` then `,"unit":"C"` per argument and `}` at the call's `)`
 *   (or `{}` for no arguments), so the fragments concatenate to the JSON `json.dumps` would
 *   write for args (PythonValueParser.json: exact big ints, which the doubles in args are
 *   not, and floats in Python's repr);
 * - `call-end` at the call's `)`. The list's `]` ends it; text after it is content again.
 * The list itself (brackets, separators) is never content; the wrapper tokens are dropped.
 *
 * A committed list that turns out impossible (a positional argument, a non-literal value, text
 * after a call) or is cut off by `end()` yields `malformed` (with the open call's id, if any,
 * and no `call-end`), then the raw text not yet consumed by a finished call is released as
 * content and scanning resumes at the offending character.
 */
export function createPythonicParser(options: PythonicParserOptions = {}): ToolCallParser {
  return new PythonicParser(parseParserOptions(PythonicParserOptionsSchema, options, 'pythonic'));
}

type ListState = 'open' | 'call-name' | 'call-paren' | 'arg-name' | 'arg-eq' | 'arg-value' | 'after-call';

interface OpenCall {
  callId: string;
  args: Record<string, unknown>;
  argNames: Set<string>;
}

class PythonicParser implements ToolCallParser {
  readonly #options: z.output<typeof PythonicParserOptionsSchema>;
  readonly #out = new EventOutput();
  #mode: 'prose' | 'candidate' | 'list' = 'prose';
  /** Prose that could still be a wrapper token. */
  #held = '';
  #candidate = new PythonicCandidate();
  #lexer: PythonLexer | undefined;
  #state: ListState = 'open';
  #call: OpenCall | undefined;
  #callName = '';
  #argName = '';
  #value: PythonValueParser | undefined;
  /** Whether a `]` may close the list now (after a finished call, or a comma after one). */
  #canClose = false;
  /** The list's text since the last finished call, from earlier chunks and from `#chunkFrom` on. */
  #raw = '';
  #chunkFrom = 0;
  #calls = 0;
  #ended = false;
  /** Whether the prose so far ends at the start of a line (only spaces or tabs since its last newline). */
  #atLineStart = true;

  readonly #markers: string[];

  constructor(options: z.output<typeof PythonicParserOptionsSchema>) {
    this.#options = options;
    this.#markers = ['[', ...options.wrapperTokens];
  }

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    this.#run(delta, false);
    return this.#out.take();
  }

  end(): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#run('', true);
    return this.#out.take(true);
  }

  #run(delta: string, final: boolean): void {
    let input = delta;
    for (;;) {
      if (this.#mode === 'prose') {
        const text = this.#held + input;
        this.#held = '';
        input = this.#prose(text, final);
        if (input === '') return;
      } else if (this.#mode === 'candidate') {
        const result = this.#candidate.feed(input, final);
        if (result.kind === 'more') return;
        if (result.kind === 'rejected') {
          // Prose after all: the "[" is content, and the text after it is scanned afresh.
          this.#text('[');
          this.#mode = 'prose';
          input = result.text.slice(1);
          continue;
        }
        this.#startList();
        input = result.text;
      } else {
        input = this.#list(input, final);
        if (input === '') return;
      }
    }
  }

  /** Emits prose up to the next `[`; returns the input from there ('' when all is consumed or held). */
  #prose(input: string, final: boolean): string {
    let rest = input;
    for (;;) {
      const found = searchMarkers(rest, this.#markers, final);
      if (!found.found) {
        const holdFrom = final ? rest.length : found.holdFrom;
        this.#text(rest.slice(0, holdFrom));
        this.#held = rest.slice(holdFrom);
        return '';
      }
      this.#text(rest.slice(0, found.index));
      if (found.marker === '[' && !this.#atLineStart) {
        this.#text('[');
        rest = rest.slice(found.index + 1);
        continue;
      }
      if (found.marker === '[') {
        this.#mode = 'candidate';
        this.#candidate = new PythonicCandidate();
        return rest.slice(found.index);
      }
      // A wrapper token: what follows it starts a line.
      this.#atLineStart = true;
      rest = rest.slice(found.index + found.marker.length);
    }
  }

  /** Prose out as content, keeping track of whether it ends at a line's start. */
  #text(text: string): void {
    if (text === '') return;
    this.#out.text(text);
    const newline = text.lastIndexOf('\n');
    const tail = newline === -1 ? text : text.slice(newline + 1);
    this.#atLineStart = (newline !== -1 || this.#atLineStart) && /^[ \t]*$/.test(tail);
  }

  #startList(): void {
    this.#mode = 'list';
    this.#state = 'open';
    this.#canClose = false;
    this.#raw = '';
    this.#lexer = new PythonLexer((token) => this.#token(token));
  }

  /** Feeds list text; returns what follows the list or a failure ('' while the list is still open). */
  #list(input: string, final: boolean): string {
    const lexer = this.#lexer!;
    this.#chunkFrom = 0;
    try {
      const stop = lexer.feed(input);
      if (this.#mode !== 'list') return input.slice(stop);
    } catch (error) {
      if (!(error instanceof PythonSyntaxError)) throw error;
      // Nothing from the offending character on belongs to the list: it is scanned as prose.
      this.#fail(error.message, this.#raw + input.slice(this.#chunkFrom, lexer.index));
      return input.slice(lexer.index);
    }
    this.#raw += input.slice(this.#chunkFrom);
    if (final) {
      let reason = 'the output ended inside the tool call list';
      try {
        lexer.finish();
      } catch (error) {
        if (!(error instanceof PythonSyntaxError)) throw error;
        reason = `the output ended inside the tool call list (${error.message})`;
      }
      this.#fail(reason, this.#raw);
    }
    return '';
  }

  #fail(reason: string, unconsumed: string): void {
    const callId = this.#call?.callId;
    this.#out.event(callId === undefined ? { type: 'malformed', reason: `pythonic: ${reason}` } : { type: 'malformed', callId, reason: `pythonic: ${reason}` });
    this.#text(unconsumed);
    this.#call = undefined;
    this.#value = undefined;
    this.#lexer = undefined;
    this.#mode = 'prose';
  }

  /** The list grammar, one token at a time; returns false once the list has closed. */
  #token(token: PythonToken): boolean {
    switch (this.#state) {
      case 'open':
        this.#state = 'call-name';
        return true;
      case 'call-name':
        if (token.kind === 'name') {
          this.#callName = token.value;
          this.#state = 'call-paren';
          return true;
        }
        if (isPunct(token, ']') && this.#canClose) return this.#closeList();
        throw new PythonSyntaxError('expected the name of a function to call');
      case 'call-paren': {
        if (!isPunct(token, '(')) throw new PythonSyntaxError(`expected '(' after ${this.#callName}`);
        this.#calls += 1;
        const callId = `${this.#options.callIdPrefix}${this.#calls}`;
        this.#call = { callId, args: {}, argNames: new Set() };
        this.#out.event({ type: 'call-start', callId, name: this.#callName });
        this.#state = 'arg-name';
        return true;
      }
      case 'arg-name':
        if (token.kind === 'name') {
          if (this.#call!.argNames.has(token.value)) throw new PythonSyntaxError(`keyword argument repeated: ${token.value}`);
          this.#argName = token.value;
          this.#state = 'arg-eq';
          return true;
        }
        if (isPunct(token, ')')) return this.#endCall();
        throw new PythonSyntaxError('tool calls take keyword arguments only');
      case 'arg-eq':
        if (!isPunct(token, '=')) throw new PythonSyntaxError(`expected '=' after the argument name ${this.#argName}`);
        this.#value = new PythonValueParser();
        this.#state = 'arg-value';
        return true;
      case 'arg-value':
        if (this.#value!.offer(token)) return true;
        this.#argument(this.#value!.value, this.#value!.json);
        if (isPunct(token, ',')) {
          this.#state = 'arg-name';
          return true;
        }
        if (isPunct(token, ')')) return this.#endCall();
        throw new PythonSyntaxError(`expected ',' or ')' after the value of ${this.#argName}`);
      case 'after-call':
        if (isPunct(token, ',')) {
          this.#state = 'call-name';
          return true;
        }
        if (isPunct(token, ']')) return this.#closeList();
        throw new PythonSyntaxError("expected ',' or ']' after a call");
    }
  }

  #argument(value: unknown, json: string): void {
    const call = this.#call!;
    const name = this.#argName;
    const first = call.argNames.size === 0;
    call.argNames.add(name);
    setOwn(call.args, name, value);
    this.#value = undefined;
    this.#out.event({ type: 'call-piece', callId: call.callId, piece: { kind: 'field', path: [name], value } });
    this.#out.event({ type: 'call-args', callId: call.callId, text: `${first ? '{' : ','}${JSON.stringify(name)}:${json}` });
  }

  #endCall(): boolean {
    const call = this.#call!;
    this.#out.event({ type: 'call-args', callId: call.callId, text: call.argNames.size === 0 ? '{}' : '}' });
    this.#out.event({ type: 'call-end', callId: call.callId, args: call.args });
    this.#call = undefined;
    this.#state = 'after-call';
    this.#canClose = true;
    this.#consumedThroughCurrent();
    return true;
  }

  #closeList(): boolean {
    this.#consumedThroughCurrent();
    this.#lexer = undefined;
    this.#mode = 'prose';
    // A list that follows at once ([f(x=1)][g(y=2)]) is more calls, as after a newline.
    this.#atLineStart = true;
    return false;
  }

  /** A finished call (or the list's end) has consumed the text up to the current character. */
  #consumedThroughCurrent(): void {
    this.#raw = '';
    this.#chunkFrom = this.#lexer!.index + 1;
  }
}

function isPunct(token: PythonToken, value: string): boolean {
  return token.kind === 'punct' && token.value === value;
}
