import { z } from 'zod';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { LeadingWhitespace } from './leading-whitespace.ts';
import { parseParserOptions } from './parser-options.ts';
import { PythonLexer, PythonSyntaxError, type PythonToken } from './python-literal-lexer.ts';
import { PythonCallSkipper } from './python-call-skipper.ts';
import { PythonicCandidate } from './pythonic-candidate.ts';
import { PythonicHeldText } from './pythonic-held-text.ts';
import { PythonicListGrammar } from './pythonic-list-grammar.ts';
import { PythonicProseScanner } from './pythonic-prose-scanner.ts';

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
 * A call that cannot be read (a value that is no literal ours reads, such as `b'z'`, `1e999` or
 * a name; a positional or repeated argument) is `malformed`, with its id, at the offending
 * character; its own text, from its name to the `)` that closes it (PythonCallSkipper), is
 * content (held until a call of the list has run; if none ever does, the list's whole text is,
 * as written), and the list goes on: the calls after it still run, as the next
 * `<tool_call>` does after a broken hermes call. A committed list that turns out impossible
 * outside a call (text after a call, a bracket that does not match) or is cut off by `end()`
 * yields `malformed` (with the open call's id, if any, and no `call-end`), then the raw text not
 * yet consumed by a finished call is released as content and scanning resumes at the offending
 * character.
 */
export function createPythonicParser(options: PythonicParserOptions = {}): ToolCallParser {
  return new PythonicParser(parseParserOptions(PythonicParserOptionsSchema, options, 'pythonic'));
}

class PythonicParser implements ToolCallParser {
  readonly #options: z.output<typeof PythonicParserOptionsSchema>;
  readonly #out = new EventOutput();
  readonly #leading = new LeadingWhitespace();
  readonly #prose: PythonicProseScanner;
  #mode: 'prose' | 'candidate' | 'list' = 'prose';
  #candidate = new PythonicCandidate();
  #grammar: PythonicListGrammar | undefined;
  /** Reads the list's tokens; undefined while #skipper reads through a malformed call. */
  #lexer: PythonLexer | undefined;
  #skipper: PythonCallSkipper | undefined;
  /** The malformed calls' text, until it is known how it reads. */
  readonly #held = new PythonicHeldText();
  /** The list's text since the last finished call, from earlier chunks and from `#chunkFrom` on. */
  #raw = '';
  /** The chunk the lexer reads. */
  #chunk = '';
  #chunkFrom = 0;
  /** Where, in that text, the current call's name begins. */
  #callFrom = 0;
  #calls = 0;
  #ended = false;

  constructor(options: z.output<typeof PythonicParserOptionsSchema>) {
    this.#options = options;
    this.#prose = new PythonicProseScanner(this.#out, options.wrapperTokens);
  }

  push(delta: string): ParserEvent[] {
    if (this.#ended) throw new Error('push() after end()');
    this.#run(delta, false);
    const events = this.#out.take();
    return this.#leading.deciding ? this.#leading.filter(events, false) : events;
  }

  end(): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#run('', true);
    const events = this.#out.take(true);
    return this.#leading.deciding ? this.#leading.filter(events, true) : events;
  }

  #run(delta: string, final: boolean): void {
    let input = delta;
    for (;;) {
      if (this.#mode === 'prose') {
        input = this.#prose.scan(input, final);
        if (input === '') return;
        this.#mode = 'candidate';
        this.#candidate = new PythonicCandidate();
      } else if (this.#mode === 'candidate') {
        const result = this.#candidate.feed(input, final);
        if (result.kind === 'more') return;
        if (result.kind === 'rejected') {
          // Prose after all: the "[" is content, and the text after it is scanned afresh.
          this.#prose.listText('[');
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

  #startList(): void {
    this.#prose.listStarted();
    this.#mode = 'list';
    this.#raw = '';
    this.#held.startList();
    this.#grammar = new PythonicListGrammar(this.#out, () => `${this.#options.callIdPrefix}${++this.#calls}`);
    this.#lexer = new PythonLexer((token) => this.#token(token));
  }

  /** Feeds list text; returns what follows the list or a failure ('' while the list is still open). */
  #list(input: string, final: boolean): string {
    let at = 0;
    for (;;) {
      if (this.#skipper !== undefined) {
        const skipped = this.#skipper.feed(input, at);
        const to = skipped.kind === 'more' ? input.length : skipped.kind === 'closed' ? skipped.end : skipped.at;
        this.#held.skip(input.slice(at, to));
        if (skipped.kind === 'more') {
          if (final) this.#fail('the output ended inside the tool call list', this.#held.skipped);
          return '';
        }
        this.#skipper = undefined;
        if (skipped.kind === 'broken') {
          this.#fail(skipped.reason, this.#held.skipped);
          return input.slice(to);
        }
        this.#prose.text(this.#held.dropClosed());
        this.#lexer = new PythonLexer((token) => this.#token(token));
        this.#raw = '';
        at = to;
      }
      const lexer = this.#lexer!;
      this.#chunk = input;
      this.#chunkFrom = at;
      try {
        const stop = lexer.feed(input, at);
        if (this.#mode !== 'list') return input.slice(stop);
      } catch (error) {
        if (!(error instanceof PythonSyntaxError)) throw error;
        const consumed = this.#raw + input.slice(this.#chunkFrom, lexer.index);
        if (this.#grammar!.openCallId !== undefined && this.#dropCall(error.message, consumed)) {
          at = lexer.index;
          continue;
        }
        // Nothing from the offending character on belongs to the list: it is scanned as prose.
        this.#fail(error.message, consumed);
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
  }

  /**
   * The open call cannot be read (a value that is no literal, a positional or repeated
   * argument): it alone is malformed, and the list goes on after its `)`, as a hermes call that
   * fails leaves the next `<tool_call>` to run. Its text is content: once a call of the list has
   * run, from its name on; before, all of `consumed` (the list's text since its `[` or the last
   * malformed call's `)`), so that a list none of whose calls runs reads as the model wrote it.
   * Returns false, with nothing done, where the skipper cannot read on from the call's text.
   */
  #dropCall(reason: string, consumed: string): boolean {
    const callText = consumed.slice(this.#callFrom);
    const skipper = new PythonCallSkipper();
    if (skipper.feed(callText).kind !== 'more') return false;
    this.#out.event({ type: 'malformed', callId: this.#grammar!.openCallId!, reason: `pythonic: ${reason}` });
    this.#held.drop(consumed.slice(0, this.#callFrom), callText);
    this.#grammar!.dropCall();
    this.#lexer = undefined;
    this.#skipper = skipper;
    return true;
  }

  #fail(reason: string, unconsumed: string): void {
    const callId = this.#grammar?.openCallId;
    this.#out.event(callId === undefined ? { type: 'malformed', reason: `pythonic: ${reason}` } : { type: 'malformed', callId, reason: `pythonic: ${reason}` });
    this.#prose.listText(this.#held.release() + unconsumed);
    this.#grammar = undefined;
    this.#lexer = undefined;
    this.#skipper = undefined;
    this.#mode = 'prose';
  }

  /** A token of the list; returns false once the list has closed. */
  #token(token: PythonToken): boolean {
    const step = this.#grammar!.token(token);
    if (step === 'call-name' && token.kind === 'name') {
      // The name ends at the current character: PythonLexer emits a name at the one after it.
      this.#callFrom = this.#raw.length + this.#lexer!.index - this.#chunkFrom - token.value.length;
    } else if (step === 'call-end') {
      // The list is a call list after all: the bad calls before this one are content, but not its
      // brackets, nor the whitespace before it.
      this.#prose.callRan();
      this.#prose.text(this.#held.callRan());
      this.#consumedThroughCurrent();
    } else if (step === 'list-end') {
      // A list whose every call was malformed: its end is text too, like the rest of it.
      const written = this.#held.release();
      const ran = this.#held.ran;
      if (!ran) this.#prose.listText(written + this.#raw + this.#chunk.slice(this.#chunkFrom, this.#lexer!.index + 1));
      this.#consumedThroughCurrent();
      this.#prose.listEnded(ran);
      this.#grammar = undefined;
      this.#lexer = undefined;
      this.#mode = 'prose';
      return false;
    }
    return true;
  }

  /** A finished call (or the list's end) has consumed the text up to the current character. */
  #consumedThroughCurrent(): void {
    this.#raw = '';
    this.#chunkFrom = this.#lexer!.index + 1;
  }
}
