// A streamed token's event, chat or text completion, with some text in it: a character that is
// not the closing quote (the chat role chunk's `"content":""` is no token). The character itself,
// not a lookahead: a read that ends on `"content":"` has not shown yet which of the two it is.
const TOKEN_TEXT = /"(?:text|content)":"[^"]/;
// Enough of the previous read to complete the pattern with the next: `"content":"` is 11 characters.
const TAIL = 16;

/**
 * Watches a stream's socket reads for its first token's text, and counts its events. Either can
 * straddle two reads: TCP cuts the bytes where it likes. Matched one read at a time, a split
 * `"text":"` was missed and the TTFT taken at a later token, and a split blank line went uncounted;
 * so each read is scanned with the end of the one before it.
 */
export class SseReadScanner {
  events = 0;
  sawToken = false;
  #tail = '';
  /** The previous read ended on a newline that no counted blank line took. */
  #openNewline = false;

  /** Takes one read's text; true when this read brought the first token's text. */
  read(text: string): boolean {
    let first = false;
    // No match in the reads so far means none within the tail alone: a match here ends in this read.
    if (!this.sawToken && TOKEN_TEXT.test(this.#tail + text)) this.sawToken = first = true;
    // Only a newline the previous read left open: one that ended a counted blank line is taken.
    const scanned = (this.#openNewline ? '\n' : '') + text;
    let taken = 0;
    for (let at = scanned.indexOf('\n\n'); at >= 0; at = scanned.indexOf('\n\n', at + 2)) {
      this.events++;
      taken = at + 2;
    }
    this.#openNewline = scanned.endsWith('\n') && taken < scanned.length;
    this.#tail = (this.#tail + text).slice(-TAIL);
    return first;
  }
}
