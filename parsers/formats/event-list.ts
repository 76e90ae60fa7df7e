import type { ParserEvent } from '../parser-events.ts';

/** The tail of a push kept back because it ends in the first half of a surrogate pair. */
export type Carry = { type: 'text' | 'reasoning'; text: string } | { type: 'call-args'; callId: string; text: string };

/**
 * The events of one push/end, with adjacent text (and reasoning, and same-call argument)
 * fragments merged and empty ones dropped.
 */
export class EventList {
  events: ParserEvent[] = [];

  /** Starts with what the previous push kept back. */
  constructor(carry?: Carry) {
    this.#put(carry);
  }

  /** Hands over the events so far and starts a new list (one per push, reusing this object). */
  take(carry?: Carry): ParserEvent[] {
    const events = this.events;
    this.events = [];
    this.#put(carry);
    return events;
  }

  // Hot path (once per delta): no spreads, no generic dispatch.
  text(text: string): void {
    if (text.length === 0) return;
    const last = this.#last();
    if (last !== undefined && last.type === 'text') last.text += text;
    else this.events.push({ type: 'text', text });
  }

  reasoning(text: string): void {
    if (text.length === 0) return;
    const last = this.#last();
    if (last !== undefined && last.type === 'reasoning') last.text += text;
    else this.events.push({ type: 'reasoning', text });
  }

  args(callId: string, text: string): void {
    if (text.length === 0) return;
    const last = this.#last();
    if (last !== undefined && last.type === 'call-args' && last.callId === callId) last.text += text;
    else this.events.push({ type: 'call-args', callId, text });
  }

  push(event: ParserEvent): void {
    this.events.push(event);
  }

  /**
   * Removes a trailing lone high surrogate from the last fragment, to be emitted first next
   * time: no event ever carries half a character, whatever the split.
   */
  takeCarry(): Carry | undefined {
    const last = this.#last();
    if (!last || (last.type !== 'text' && last.type !== 'reasoning' && last.type !== 'call-args')) return undefined;
    const code = last.text.charCodeAt(last.text.length - 1);
    if (!(code >= 0xd800 && code <= 0xdbff)) return undefined;
    const carried = last.text.slice(-1);
    if (last.text.length === 1) this.events.pop();
    else last.text = last.text.slice(0, -1);
    return last.type === 'call-args' ? { type: 'call-args', callId: last.callId, text: carried } : { type: last.type, text: carried };
  }

  /** Never reads index -1 of an empty array: that is a slow lookup up the prototype chain. */
  #last(): ParserEvent | undefined {
    const n = this.events.length;
    return n === 0 ? undefined : this.events[n - 1];
  }

  #put(carry: Carry | undefined): void {
    if (carry === undefined) return;
    if (carry.type === 'call-args') this.args(carry.callId, carry.text);
    else if (carry.type === 'reasoning') this.reasoning(carry.text);
    else this.text(carry.text);
  }
}
