import { searchMarkers } from '../marker-search.ts';
import type { EventOutput } from './event-output.ts';
import { ProseFenceTracker } from './prose-fence-tracker.ts';

/**
 * The pythonic parser's text outside call lists (pythonic-parser.ts): content out as it comes, the
 * wrapper tokens dropped, up to a `[` that may open a call list. Only a `[` at the start of a line
 * may (the output's start, after a newline or a wrapper token, spaces and tabs aside), and not one
 * inside a fenced code block. Whitespace after a list whose calls ran is held here as a gap.
 */
export class PythonicProseScanner {
  readonly #out: EventOutput;
  readonly #markers: string[];
  /** Prose that could still be a wrapper token. */
  #heldProse = '';
  /** Whether the prose so far ends at the start of a line (only spaces or tabs since its last newline). */
  #atLineStart = true;
  /** A `[` inside a fenced code block is the code's (see ProseFenceTracker), unless a wrapper token, no code's, is just before it. */
  readonly #fences = new ProseFenceTracker();
  #afterWrapper = false;
  /**
   * Whitespace after a list whose calls ran (and one `;` on its line), held: frame before another
   * call list or the output's end (vLLM has no content for `[f(x=1)];\n`), else content with what
   * follows it.
   */
  #gap: string | undefined;
  /** That gap, once a `[` after it is read as a list: frame if a call of it runs, else its text's start. */
  #gapBeforeList = '';

  constructor(out: EventOutput, wrapperTokens: readonly string[]) {
    this.#out = out;
    this.#markers = ['[', ...wrapperTokens];
  }

  /** Emits prose up to the next `[` that may open a list; returns the input from there ('' when all is consumed or held). */
  scan(input: string, final: boolean): string {
    let rest = this.#heldProse + input;
    this.#heldProse = '';
    for (;;) {
      if (this.#gap !== undefined) {
        let space = 0;
        for (; space < rest.length; space++) {
          const char = rest[space]!;
          if (' \t\n\r'.includes(char)) continue;
          // One `;` on the list's own line closes the statement, as ast.parse reads it: vLLM has no
          // content for `[f(x=1)];` (and llama3-json takes its `;` as frame); before text it is content.
          if (char === ';' && !/[;\n]/.test(this.#gap + rest.slice(0, space))) continue;
          break;
        }
        this.#gap += rest.slice(0, space);
        // As text would: what follows is no longer right after a wrapper token.
        if (space > 0) this.#afterWrapper = false;
        rest = rest.slice(space);
        // At the output's end the gap is dropped: frame.
        if (rest === '') return '';
      }
      const found = searchMarkers(rest, this.#markers, final);
      if (!found.found) {
        const holdFrom = final ? rest.length : found.holdFrom;
        // A possible wrapper token right after the gap: the gap waits with it.
        if (holdFrom > 0) this.text(this.#takeGap() + rest.slice(0, holdFrom));
        this.#heldProse = rest.slice(holdFrom);
        return '';
      }
      if (found.index > 0) this.text(this.#takeGap() + rest.slice(0, found.index));
      if (found.marker === '[' && (!this.#atLineStart || (this.#fences.inFence && !this.#afterWrapper))) {
        this.text(this.#takeGap() + '[');
        rest = rest.slice(found.index + 1);
        continue;
      }
      if (found.marker === '[') {
        this.#gapBeforeList = this.#gap ?? '';
        this.#gap = undefined;
        return rest.slice(found.index);
      }
      // A wrapper token: what follows it starts a line.
      this.#atLineStart = this.#afterWrapper = true;
      rest = rest.slice(found.index + found.marker.length);
    }
  }

  /** Prose out as content, keeping track of whether it ends at a line's start. */
  text(text: string): void {
    if (text === '') return;
    this.#out.text(text);
    this.#fences.write(text);
    this.#afterWrapper = false;
    const newline = text.lastIndexOf('\n');
    const tail = newline === -1 ? text : text.slice(newline + 1);
    this.#atLineStart = (newline !== -1 || this.#atLineStart) && /^[ \t]*$/.test(tail);
  }

  /** The `[` that `scan` returned at opens a list: its line is no fence line. */
  listStarted(): void {
    this.#fences.notFenceLine();
  }

  /** A call of the list ran: the whitespace before the list was frame. */
  callRan(): void {
    this.#gapBeforeList = '';
  }

  /** The `[` turned out text, or the list did: `text` goes out as content after the whitespace held before it. */
  listText(text: string): void {
    this.text(this.#takeGapBeforeList() + text);
  }

  /** The list's `]` was read; `ran` says whether a call of it ran (whitespace after it is then a gap). */
  listEnded(ran: boolean): void {
    if (ran) this.#gap = '';
    // A list that follows at once ([f(x=1)][g(y=2)]) is more calls, as after a newline.
    this.#atLineStart = true;
  }

  /** The held gap, as text to go out now (a gap before prose is content), and no gap held after it. */
  #takeGap(): string {
    const gap = this.#gap ?? '';
    this.#gap = undefined;
    return gap;
  }

  #takeGapBeforeList(): string {
    const gap = this.#gapBeforeList;
    this.#gapBeforeList = '';
    return gap;
  }
}
