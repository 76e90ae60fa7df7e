import type { ParserEvent } from '../parser-events.ts';

/**
 * Whitespace at the very start of an output, before a call, is formatting, not an answer (vLLM's
 * parsers strip it: `content` is null for "\n\n<tool_call>…"), as whitespace between and after
 * calls is. A format only knows a call once it has read its opener, by when it has already given
 * that whitespace out as text; so its events are filtered here until the first that decides: a
 * call takes the whitespace, anything else (prose, reasoning, a frame that broke before its call
 * began) takes it out first, unchanged. Held as events rather than inside each format's states,
 * so every format gets it alike, and once decided the filter costs one field test.
 */
export class LeadingWhitespace {
  /** The whitespace given as text so far; undefined once decided. */
  #held: string | undefined = '';
  /** The first call, begun after whitespace: if it breaks, its raw text goes out after that whitespace. */
  #callId: string | undefined;

  get deciding(): boolean {
    return this.#held !== undefined;
  }

  /** `events` less any text still undecided; with `final`, that text goes out at the end. */
  filter(events: ParserEvent[], final: boolean): ParserEvent[] {
    const out: ParserEvent[] = [];
    for (const e of events) {
      const held = this.#held;
      if (held === undefined) out.push(e);
      else if (this.#callId !== undefined) this.#inCall(e, held, out);
      else if (e.type === 'text' && isWhitespace(e.text)) this.#held = held + e.text;
      else if (e.type === 'text') {
        out.push({ type: 'text', text: held + e.text });
        this.#held = undefined;
      } else if (e.type === 'call-start' && held !== '') {
        this.#callId = e.callId;
        out.push(e);
      } else {
        if (held !== '') out.push({ type: 'text', text: held });
        out.push(e);
        this.#held = undefined;
      }
    }
    // An output of whitespace alone is its own answer, as the gateway's whole-text path keeps it.
    if (final && this.#held !== undefined && this.#callId === undefined && this.#held !== '') out.push({ type: 'text', text: this.#held });
    if (final) this.#held = undefined;
    return out;
  }

  /** The first call's events: a finished call keeps the whitespace as its frame; a broken one's raw text (after `malformed`) starts with it. */
  #inCall(e: ParserEvent, held: string, out: ParserEvent[]): void {
    out.push(e);
    if ((e.type === 'call-end' || e.type === 'malformed') && e.callId === this.#callId) {
      if (e.type === 'malformed') out.push({ type: 'text', text: held });
      this.#held = this.#callId = undefined;
    }
  }
}

function isWhitespace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return false;
  }
  return true;
}
