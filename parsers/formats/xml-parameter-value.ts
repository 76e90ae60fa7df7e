/**
 * A Qwen3-Coder parameter value as it streams: raw text without one leading and one trailing
 * "\n" (vLLM's rule). When the value is code, its lines come out as they complete; a line is
 * certain only once a character after its "\n" has arrived, since the value's last "\n" is not
 * its own. The lines always concatenate to the final value.
 */
export class XmlParameterValue {
  readonly name: string;
  readonly #lines: boolean;
  /** Only appended to until the end: searching it would flatten a long value on every delta. */
  #value = '';
  #started = false;
  /** The current line so far, and a finished line still waiting for a character after its "\n". */
  #line = '';
  #waiting: string | undefined;

  constructor(name: string, lines: boolean) {
    this.name = name;
    this.#lines = lines;
  }

  /** Appends text known to belong to the value; returns the lines it completed. */
  append(text: string): string[] {
    if (!this.#started && text !== '') {
      this.#started = true;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.#value += text;
    if (!this.#lines || text === '') return [];
    const lines: string[] = [];
    if (this.#waiting !== undefined) {
      lines.push(this.#waiting);
      this.#waiting = undefined;
    }
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const line = this.#line + text.slice(from, nl + 1);
      this.#line = '';
      if (nl < text.length - 1) lines.push(line);
      else this.#waiting = line;
      from = nl + 1;
    }
    this.#line += text.slice(from);
    return lines;
  }

  /** The value has ended: its text, and its last line if it streams lines and one is left. */
  close(): { value: string; lastLine: string | undefined } {
    const value = this.#value.endsWith('\n') ? this.#value.slice(0, -1) : this.#value;
    if (!this.#lines) return { value, lastLine: undefined };
    const last = this.#waiting !== undefined ? this.#waiting.slice(0, -1) : this.#line;
    return { value, lastLine: last === '' ? undefined : last };
  }
}
