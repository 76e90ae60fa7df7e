import type { ParserEvent } from '../parser-events.ts';

/**
 * The events a format parser has decided on, kept across pushes so that a high surrogate at
 * the very end of a push waits for its pair: no `text` or `reasoning` event ever carries half
 * a character, whatever the split. Adjacent text (or reasoning, or one call's argument
 * fragments) within one push is merged.
 */
export class EventOutput {
  #events: ParserEvent[] = [];
  #held: { type: 'text' | 'reasoning'; text: string } | undefined;

  text(text: string): void {
    this.#visible('text', text);
  }

  reasoning(text: string): void {
    this.#visible('reasoning', text);
  }

  event(event: ParserEvent): void {
    if (event.type === 'text' || event.type === 'reasoning') {
      this.#visible(event.type, event.text);
      return;
    }
    this.#releaseHeld();
    const last = this.#events[this.#events.length - 1];
    if (event.type === 'call-args' && last?.type === 'call-args' && last.callId === event.callId) last.text += event.text;
    else if (event.type !== 'call-args' || event.text !== '') this.#events.push(event.type === 'call-args' ? { ...event } : event);
  }

  /** Nothing is pending: no events since the last take, and no half character held back. */
  get idle(): boolean {
    return this.#events.length === 0 && this.#held === undefined;
  }

  /** The events so far; with `final`, nothing is held back. */
  take(final = false): ParserEvent[] {
    if (final) {
      this.#releaseHeld();
    } else {
      const last = this.#events[this.#events.length - 1];
      if ((last?.type === 'text' || last?.type === 'reasoning') && isHighSurrogate(last.text.charCodeAt(last.text.length - 1))) {
        this.#held = { type: last.type, text: last.text.slice(-1) };
        if (last.text.length === 1) this.#events.pop();
        else last.text = last.text.slice(0, -1);
      }
    }
    const events = this.#events;
    this.#events = [];
    return events;
  }

  #visible(type: 'text' | 'reasoning', text: string): void {
    if (this.#held?.type === type) {
      text = this.#held.text + text;
      this.#held = undefined;
    } else {
      this.#releaseHeld();
    }
    if (text.length === 0) return;
    const last = this.#events[this.#events.length - 1];
    if (last?.type === type) last.text += text;
    else this.#events.push({ type, text });
  }

  #releaseHeld(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    this.#visible(held.type, held.text);
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
