const CR = 13;
const LF = 10;

/**
 * The lines of source a cell has sent, numbered as its executor numbers them: as compile() of a
 * str reads line ends, \r\n and a lone \r are one each, also when a push ends between the two,
 * and a last line without its end counts. A statement report of lines not sent is not the
 * executor's (python-cell.ts); counting only \n dropped the reports of code with lone \r ends.
 */
export class SentLines {
  #ends = 0;
  #open = false;
  /** The last text ended in \r: a \n starting the next one ends no other line. */
  #afterCr = false;

  add(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === CR || (c === LF && !this.#afterCr)) this.#ends++;
      this.#afterCr = c === CR;
    }
    this.#open = !(text.endsWith('\n') || text.endsWith('\r'));
  }

  get count(): number {
    return this.#ends + (this.#open ? 1 : 0);
  }
}
