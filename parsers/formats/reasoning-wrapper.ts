import { z } from 'zod';
import { knownString } from '../known-string.ts';
import { searchMarkers } from '../marker-search.ts';
import type { ParserEvent, ToolCallParser } from '../parser-events.ts';
import { EventOutput } from './event-output.ts';
import { FormatParser } from './format-parser.ts';
import { parseParserOptions } from './parser-options.ts';

export const ReasoningOptionsSchema = z
  .object({
    open: z.string().min(1).default('<think>'),
    close: z.string().min(1).default('</think>'),
    /**
     * The prompt already opened the block (Qwen3 thinking templates, DeepSeek-R1): the output
     * starts as reasoning. An `open` marker at its very start is dropped all the same.
     */
    startsInReasoning: z.boolean().default(false),
  })
  .strict();

export type ReasoningOptions = z.input<typeof ReasoningOptionsSchema>;

type State =
  /** Nothing but whitespace yet: an `open` marker here starts the block. */
  | 'start'
  /** Pre-opened block, at its very first character (a repeated `open` is dropped). */
  | 'pre-opened'
  | 'reasoning'
  /** After the block, or no block: everything goes to the inner parser. */
  | 'content';

/**
 * Routes a reasoning block (`<think>…</think>`) to `reasoning` events and everything else to
 * `inner`, whose events pass through unchanged.
 *
 * The block is recognised where reasoning models put it: at the start of the output (after
 * whitespace, which is content), or from the first character with `startsInReasoning`. Only
 * that one block: later `open` markers are the inner parser's text, so "<think>" inside a
 * tool call argument or in prose is never taken for reasoning. The markers themselves are
 * neither reasoning nor content. Reasoning cut off by `end()` (no `close`) is still reasoning.
 *
 * A tool call written inside the block stays reasoning and is never parsed, as in vLLM (whose
 * reasoning parser runs before the tool parser): the model is thinking about the call, and
 * the call that counts is the one it makes after `close`.
 */
export function withReasoning(inner: ToolCallParser, options: ReasoningOptions = {}): ToolCallParser {
  return new ReasoningWrapper(inner, parseParserOptions(ReasoningOptionsSchema, options, 'reasoning'));
}

class ReasoningWrapper implements ToolCallParser {
  readonly #inner: ToolCallParser;
  /** The inner parser is a FormatParser (see push): known once, not by a prototype walk per delta. */
  readonly #innerIsFormatParser: boolean;
  readonly #options: z.output<typeof ReasoningOptionsSchema>;
  readonly #out = new EventOutput();
  #state: State;
  /** Text that could still be (part of) a marker. */
  #held = '';
  #ended = false;
  /**
   * Deltas go straight to the inner parser (see push): after the block, with nothing held here
   * or in #out. Worked out after each push that went the long way, so the per-token test is one
   * field.
   */
  #direct = false;

  constructor(inner: ToolCallParser, options: z.output<typeof ReasoningOptionsSchema>) {
    this.#inner = inner;
    this.#innerIsFormatParser = inner instanceof FormatParser;
    this.#options = options;
    this.#state = options.startsInReasoning ? 'pre-opened' : 'start';
  }

  push(delta: string): ParserEvent[] {
    delta = knownString(delta);
    if (this.#direct && delta.length !== 0) {
      // After the block every delta goes to the inner parser, and its events come out as they
      // are whenever #out would leave them so: skip the copy through #out. A FormatParser's
      // events always are (its EventList merges, drops empties and carries a half character);
      // checking that costs a megamorphic `.type` read per event, so it is done only for others.
      const events = this.#inner.push(delta);
      if (this.#innerIsFormatParser || isNormal(events)) return events;
      for (const event of events) this.#out.event(event);
      return this.#take();
    }
    if (this.#ended) throw new Error('push() after end()');
    this.#run(delta, false);
    return this.#take();
  }

  pushFast(delta: string): string | ParserEvent[] {
    // After the block a FormatParser's events pass through unchanged (see push), so its fast
    // answer does too.
    if (this.#direct && this.#innerIsFormatParser && delta.length !== 0) return (this.#inner as FormatParser).pushFast(delta);
    return this.push(delta);
  }

  upstreamSplitsReasoning(): void {
    // Only before the first character: once the output has begun, it has been read one way.
    if (this.#state === 'pre-opened') this.#state = 'content';
  }

  #take(): ParserEvent[] {
    const events = this.#out.take();
    this.#direct = this.#state === 'content' && this.#held === '' && this.#out.idle;
    return events;
  }

  end(cut = false): ParserEvent[] {
    if (this.#ended) return [];
    this.#ended = true;
    this.#direct = false;
    this.#run('', true);
    for (const event of this.#inner.end(cut)) this.#out.event(event);
    return this.#out.take(true);
  }

  /**
   * Routes `#held + delta`. What is left of it is `input[at..]`, moved along by index rather
   * than by slicing: the content after the block goes to the inner parser as the original
   * string and an offset (#contentFrom), never as a long slice.
   */
  #run(delta: string, final: boolean): void {
    const input = knownString(this.#held + delta);
    this.#held = '';
    const { close } = this.#options;
    let at = 0;
    while (at < input.length) {
      switch (this.#state) {
        case 'start': {
          let i = at;
          while (i < input.length && isSpace(input[i]!)) i++;
          this.#content(input.slice(at, i));
          at = i;
          if (at === input.length) return;
          at = this.#afterOpen(input, at, 'content', final);
          break;
        }
        case 'pre-opened':
          at = this.#afterOpen(input, at, 'reasoning', final);
          break;
        case 'reasoning': {
          const rest = at === 0 ? input : input.slice(at);
          if (rest.indexOf(close[0]!) === -1) {
            // Most deltas of reasoning: no character that could begin the close marker.
            this.#out.reasoning(rest);
            return;
          }
          const found = searchMarkers(rest, [close]);
          const upTo = found.found ? found.index : final ? rest.length : found.holdFrom;
          this.#out.reasoning(rest.slice(0, upTo));
          if (!found.found) {
            this.#held = rest.slice(upTo);
            return;
          }
          this.#state = 'content';
          this.#contentFrom(input, at + found.index + close.length);
          return;
        }
        case 'content':
          this.#contentFrom(input, at);
          return;
      }
    }
  }

  /**
   * At `input[at]`, where `open` may stand: consumes it and reasons on; else goes to `otherwise`
   * without consuming anything. Returns where the input left starts (its end while undecided,
   * the rest held).
   */
  #afterOpen(input: string, at: number, otherwise: State, final: boolean): number {
    const { open } = this.#options;
    if (input.startsWith(open, at)) {
      this.#state = 'reasoning';
      return at + open.length;
    }
    const rest = at === 0 ? input : input.slice(at);
    if (open.startsWith(rest) && !final) {
      this.#held = rest;
      return input.length;
    }
    this.#state = otherwise;
    return at;
  }

  #content(text: string): void {
    if (text === '') return;
    for (const event of this.#inner.push(text)) this.#out.event(event);
  }

  /**
   * #content(text.slice(from)), without the slice where the inner parser takes an offset: a
   * long slice (the rest of a whole output pushed at once) would be one more string shape at
   * every per-character loop of the inner parser, and past four V8 reads characters through a
   * generic lookup there for good (bench/parsers: "hermes + reasoning").
   */
  #contentFrom(text: string, from: number): void {
    if (from >= text.length) return;
    if (!this.#innerIsFormatParser) {
      this.#content(text.slice(from));
      return;
    }
    for (const event of (this.#inner as FormatParser).pushFrom(text, from)) this.#out.event(event);
  }
}

/**
 * Whether EventOutput would pass `events` through unchanged: no adjacent fragments it would
 * merge, no empty fragment it would drop, and no trailing half character it would hold back.
 */
function isNormal(events: readonly ParserEvent[]): boolean {
  for (let k = 0; k < events.length; k++) {
    const e = events[k]!;
    if (e.type !== 'text' && e.type !== 'reasoning' && e.type !== 'call-args') continue;
    if (e.text.length === 0) return false;
    const next = events[k + 1];
    if (next !== undefined && next.type === e.type && (e.type !== 'call-args' || (next as typeof e).callId === e.callId)) return false;
    if (k === events.length - 1 && e.type !== 'call-args') {
      const code = e.text.charCodeAt(e.text.length - 1);
      if (code >= 0xd800 && code <= 0xdbff) return false;
    }
  }
  return true;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}
