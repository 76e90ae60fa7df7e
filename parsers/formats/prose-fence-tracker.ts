import { isClosingFence, parseOpeningFence, type Fence } from '../markdown-fence.ts';

/**
 * Follows a format's prose line by line to tell whether it stands inside a CommonMark fenced
 * code block (any info string; unclosed, it runs to the end, as CommonMark has it). Pythonic
 * calls have no marker of their own, only a `[` at a line's start, and code is full of those
 * (`    [Point(x=0, y=0), Point(x=1, y=0)],` in a nested list): inside a fence such a line is the
 * model's code, which vLLM never reads as calls either (its pythonic parser takes the list only
 * as the whole output).
 */
export class ProseFenceTracker {
  #fence: Fence | undefined;
  /** The current line so far while it could still be a fence line; undefined once it cannot. */
  #line: string | undefined = '';

  get inFence(): boolean {
    return this.#fence !== undefined;
  }

  /** Prose text, in order. */
  write(text: string): void {
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      this.#add(text.slice(from, nl));
      this.#endLine();
      from = nl + 1;
    }
    this.#add(text.slice(from));
  }

  /** The current line holds something other than prose (a call list): it is no fence line. */
  notFenceLine(): void {
    this.#line = undefined;
  }

  #add(part: string): void {
    if (this.#line === undefined || part === '') return;
    const line = this.#line + part;
    // Kept only while it may be a fence, so that long prose lines are not copied again and again.
    this.#line = couldBeFence(line) ? line : undefined;
  }

  #endLine(): void {
    const line = this.#line;
    this.#line = '';
    if (line === undefined) return;
    if (this.#fence === undefined) this.#fence = parseOpeningFence(line);
    else if (isClosingFence(line, this.#fence)) this.#fence = undefined;
  }
}

/** Up to three spaces, then a fence character (or nothing yet). */
function couldBeFence(line: string): boolean {
  let i = 0;
  while (i < line.length && line[i] === ' ') i++;
  if (i > 3) return false;
  return i === line.length || line[i] === '`' || line[i] === '~';
}
