/**
 * The text of a pythonic call list's malformed calls (pythonic-parser.ts), held until it is known
 * how it reads as content. A bad call's own text, from its name to its `)`, is content once a call
 * of the list has run; until one does, its text is held as written (from the list's `[`), so that
 * a list none of whose calls runs is released whole, as the model wrote it. Between two bad calls
 * the separator is content with them, `f(x=foo), h(y=bar)`, also where a call that ran stands
 * between them (its own text and separators are the list's frame).
 */
export class PythonicHeldText {
  /**
   * While the parser skips a malformed call: its own text so far (from its name), and the list's
   * text before it since the last finished call (`[` or a separator), which is list frame unless
   * the list then fails. Held, not streamed, so that a failing list's text stays in order.
   */
  #dropped = '';
  #droppedLead = '';
  /** Malformed calls of a list none of whose calls has run yet: as written, and their own text alone. */
  #unrunWritten = '';
  #unrunOwn = '';
  /** Whether the list's last call so far was malformed, not one that ran. */
  #afterDropped = false;
  /** Whether bad calls' text of this list is out as content: the next one's goes after a separator. */
  #released = false;
  #ran = false;

  /** Whether a call of the list has ended well. */
  get ran(): boolean {
    return this.#ran;
  }

  /** The malformed call being skipped, with the list's text before it: what a list that fails now releases. */
  get skipped(): string {
    return this.#droppedLead + this.#dropped;
  }

  /** A new list: nothing held, no call run. */
  startList(): void {
    this.release();
    this.#ran = false;
    this.#afterDropped = false;
    this.#released = false;
  }

  /** A call turned out malformed: `lead` is the list's text before its name since the last finished call, `own` its text so far. */
  drop(lead: string, own: string): void {
    this.#droppedLead = lead;
    this.#dropped = own;
  }

  /** More of the malformed call's text, as the skipper reads through it. */
  skip(text: string): void {
    this.#dropped += text;
  }

  /** The malformed call closed at its `)`: the text to release now ('' while no call of the list has run). */
  dropClosed(): string {
    const own = (this.#afterDropped ? this.#droppedLead : '') + this.#dropped;
    let release = '';
    if (this.#ran) {
      // After a call that ran, the separator before this one's name, as the model wrote it.
      release = this.#released && !this.#afterDropped ? this.#droppedLead + this.#dropped : own;
      this.#released = true;
    } else {
      this.#unrunWritten += this.#droppedLead + this.#dropped;
      this.#unrunOwn += own;
    }
    this.#afterDropped = true;
    this.#dropped = this.#droppedLead = '';
    return release;
  }

  /** A call of the list ended well: the text to release now (the bad calls before it, the first time; not their brackets). */
  callRan(): string {
    const release = this.#ran ? '' : this.#unrunOwn;
    if (release !== '') this.#released = true;
    this.#ran = true;
    this.#afterDropped = false;
    this.#unrunWritten = this.#unrunOwn = '';
    return release;
  }

  /** The list ended or failed: the bad calls' text as written, to go before the list text the parser still holds. */
  release(): string {
    const written = this.#unrunWritten;
    this.#dropped = this.#droppedLead = this.#unrunWritten = this.#unrunOwn = '';
    return written;
  }
}
