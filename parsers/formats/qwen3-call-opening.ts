import { bodyStart, FUNCTION, leadingSpace, readFunctionTag } from './qwen3-function-opener.ts';

/** What a step of a Qwen3CallOpening made of the text given to it. */
export type OpeningStep =
  /** Undecided: the text is held until more arrives (never whitespace, which is taken as it comes). */
  | { kind: 'more' }
  /** `frame` (whitespace, the function tag) was taken into the call's frame; `rest` is read next, still opening. */
  | { kind: 'frame'; frame: string; rest: string }
  /** A call to `name` starts; `frame` goes into its frame first, and `rest` is its body. */
  | { kind: 'call'; name: string; frame: string; rest: string }
  /** No call: the frame so far is content (`marker` alone, when nothing was framed yet), and `rest` is read as prose. */
  | { kind: 'prose'; marker?: string; rest: string };

/**
 * The start of a Qwen3-Coder call, from `<tool_call>` (whitespace, then `<function=name>`) or from
 * a bare `<function=` in prose (its tag, whitespace, then its body: `<parameter=` or `</function>`).
 * Whitespace is taken as it comes, never held: held, it was read again with every delta, and a
 * model that ran into whitespace there cost time quadratic in its length.
 */
export class Qwen3CallOpening {
  /** `tool_call`: after `<tool_call>`; `bare`: at a bare `<function=`; `bare-tag`: after its tag. */
  #at: 'tool_call' | 'bare' | 'bare-tag';
  /** Whether a bare tag may name this tool (the request's tools, when it says). */
  readonly #offered: (name: string) => boolean;
  /** The bare tag's name. */
  #name = '';

  constructor(at: 'tool_call' | 'bare', offered: (name: string) => boolean) {
    this.#at = at;
    this.#offered = offered;
  }

  /** After `<tool_call>`, the output may not end here (it is a broken call); after a bare tag, it is text. */
  get afterToolCall(): boolean {
    return this.#at === 'tool_call';
  }

  step(input: string): OpeningStep {
    if (this.#at !== 'bare') {
      const space = leadingSpace(input);
      if (space > 0) return { kind: 'frame', frame: input.slice(0, space), rest: input.slice(space) };
    }
    if (this.#at === 'tool_call') {
      const found = readFunctionTag(input);
      if (found.kind === 'more') return { kind: 'more' };
      if (found.kind === 'tag') return { kind: 'call', name: found.name, frame: input.slice(0, found.consumed), rest: input.slice(found.consumed) };
      // A literal marker in prose: the frame so far is content, and what follows it is prose.
      return { kind: 'prose', rest: input };
    }
    if (this.#at === 'bare') {
      const found = readFunctionTag(input);
      if (found.kind === 'more') return { kind: 'more' };
      // Without the <tool_call> opener, only a tool the request offers (when it says) makes a call.
      if (found.kind === 'prose' || !this.#offered(found.name)) return { kind: 'prose', marker: FUNCTION, rest: input.slice(FUNCTION.length) };
      this.#at = 'bare-tag';
      this.#name = found.name;
      return { kind: 'frame', frame: input.slice(0, found.consumed), rest: input.slice(found.consumed) };
    }
    const body = bodyStart(input);
    if (body === 'more') return { kind: 'more' };
    if (body === 'body') return { kind: 'call', name: this.#name, frame: '', rest: input };
    // The tag's name and the whitespace after it hold no "<", so no marker: they are text as they
    // stand, and only `input` needs reading as prose (joined to it, the rest of a large delta was
    // copied at every such tag).
    return { kind: 'prose', rest: input };
  }
}
