import type { EventList } from './event-list.ts';

/**
 * A call whose body is raw code rather than JSON (Functionary's and harmony's `python`
 * recipient). Its arguments are `{"<field>": code}`; `call-args` streams that JSON as the code
 * arrives (each fragment escaped on its own, which is exact because a fragment never ends
 * between the halves of a surrogate pair), and each completed line is a `line` piece.
 */
export class RawCodeCall {
  readonly callId: string;
  readonly #field: string;
  #code = '';
  #line = '';
  #lineNo = 0;
  /** A trailing high surrogate, escaped only once its pair arrives. */
  #held = '';

  constructor(callId: string, field: string, out: EventList) {
    this.callId = callId;
    this.#field = field;
    out.args(callId, `{${JSON.stringify(field)}:"`);
  }

  write(text: string, out: EventList): void {
    text = this.#held + text;
    this.#held = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#held = text.slice(-1);
      text = text.slice(0, -1);
    }
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const line = this.#line + text.slice(from, nl + 1);
      this.#emit(text.slice(from, nl + 1), out);
      this.#lineNo += 1;
      out.push({ type: 'call-piece', callId: this.callId, piece: { kind: 'line', text: line, lineNo: this.#lineNo } });
      this.#line = '';
      from = nl + 1;
    }
    this.#line += text.slice(from);
    this.#emit(text.slice(from), out);
  }

  /** The code as written so far, for a call that fails and goes out as text. */
  get written(): string {
    return this.#code + this.#held;
  }

  /** The body has ended (its end marker, or the end of the stream). */
  finish(out: EventList): void {
    if (this.#held) {
      const held = this.#held;
      this.#held = '';
      this.#line += held;
      this.#emit(held, out);
    }
    if (this.#line.length > 0) {
      this.#lineNo += 1;
      out.push({ type: 'call-piece', callId: this.callId, piece: { kind: 'line', text: this.#line, lineNo: this.#lineNo } });
    }
    out.args(this.callId, '"}');
    out.push({ type: 'call-end', callId: this.callId, args: { [this.#field]: this.#code } });
  }

  #emit(text: string, out: EventList): void {
    if (text.length === 0) return;
    this.#code += text;
    out.args(this.callId, JSON.stringify(text).slice(1, -1));
  }
}
