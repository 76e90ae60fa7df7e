import { searchMarkers } from '../marker-search.ts';
import type { EventOutput } from './event-output.ts';
import { Qwen3CallOpening } from './qwen3-call-opening.ts';
import { FUNCTION, leadingSpace, TOOL_CALL } from './qwen3-function-opener.ts';

const PROSE_MARKERS = [TOOL_CALL, FUNCTION];

/** What a Qwen3ProseScanner made of the text given to it. */
export type ProseScan =
  /** It is out as content, but `held`, a possible marker (or the gap before one): read again with the next delta. */
  | { kind: 'text'; held: string }
  /** A call may start: `opening` reads on from `rest`, and `frame` is its frame so far (the marker, and the gap right before it). */
  | { kind: 'opening'; opening: Qwen3CallOpening; frame: string; rest: string };

/**
 * Qwen3-Coder's text outside calls (qwen3-coder-parser.ts): content out as it comes, up to a
 * `<tool_call>` or bare `<function=` that may open a call, with the whitespace after a
 * `</tool_call>` held as a gap.
 */
export class Qwen3ProseScanner {
  readonly #out: EventOutput;
  /** Whether a bare tag may name this tool (the request's tools, when it says). */
  readonly #offered: (name: string) => boolean;
  /**
   * Whitespace after a `</tool_call>`, held: frame before the next call and at the output's end
   * (the template joins parallel blocks with "\n"; vLLM's content is null), else content with
   * what follows it. undefined when no block has just closed.
   */
  #gap: string | undefined;

  constructor(out: EventOutput, offered: (name: string) => boolean) {
    this.#out = out;
    this.#offered = offered;
  }

  /** A `</tool_call>` closed a block: the whitespace after it is a gap. */
  blockClosed(): void {
    this.#gap = '';
  }

  scan(input: string, final: boolean): ProseScan {
    let gap = '';
    if (this.#gap !== undefined) {
      const space = leadingSpace(input);
      this.#gap += input.slice(0, space);
      if (space === input.length) return { kind: 'text', held: '' };
      input = input.slice(space);
      gap = this.#gap;
    }
    const found = searchMarkers(input, PROSE_MARKERS);
    if (!found.found) {
      const holdFrom = final ? input.length : found.holdFrom;
      // A possible marker right after the gap: the gap waits with it.
      if (holdFrom === 0 && input !== '') return { kind: 'text', held: input };
      this.#gap = undefined;
      this.#out.text(gap + input.slice(0, holdFrom));
      return { kind: 'text', held: input.slice(holdFrom) };
    }
    this.#gap = undefined;
    // The gap joins the next call's frame if the marker is right after it, else the text before it.
    const before = found.index === 0 ? '' : gap + input.slice(0, found.index);
    const frame = found.index === 0 ? gap : '';
    this.#out.text(before);
    const bare = found.marker === FUNCTION;
    const opening = new Qwen3CallOpening(bare ? 'bare' : 'tool_call', this.#offered);
    if (bare) return { kind: 'opening', opening, frame, rest: input.slice(found.index) };
    return { kind: 'opening', opening, frame: frame + TOOL_CALL, rest: input.slice(found.index + TOOL_CALL.length) };
  }
}
