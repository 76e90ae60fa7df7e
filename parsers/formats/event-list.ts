import type { ParserEvent } from '../parser-events.ts';

/** The tail of a push kept back because it ends in the first half of a surrogate pair. */
export type Carry = { type: 'text' | 'reasoning'; text: string } | { type: 'call-args'; callId: string; text: string };

type TextEvent = Extract<ParserEvent, { type: 'text' | 'reasoning' }>;
type ArgsEvent = Extract<ParserEvent, { type: 'call-args' }>;

/**
 * The events of one push/end, with adjacent text (and reasoning, and same-call argument)
 * fragments merged and empty ones dropped.
 *
 * This is on every delta's path, so it is written for V8:
 * - the array is created with its first event, as a one-element literal: pushing onto `[]`
 *   first grows it to 17 slots, a measurable part of a push inside a long string;
 * - the last event is remembered by kind (`#lastText`…) instead of read back from the array:
 *   events come in six shapes, and reading `.type` off all of them is a megamorphic load.
 */
export class EventList {
  #events: ParserEvent[] | undefined;
  /** The last event, if it is a `text`, `reasoning` or `call-args` fragment (at most one is set). */
  #lastText: TextEvent | undefined;
  #lastReasoning: TextEvent | undefined;
  #lastArgs: ArgsEvent | undefined;

  /** Starts with what the previous push kept back. */
  constructor(carry?: Carry) {
    this.#put(carry);
  }

  /** The events so far (a new empty array if none). */
  get events(): ParserEvent[] {
    return this.#events ?? [];
  }

  /** No event yet (nor a carried half character). */
  get empty(): boolean {
    return this.#events === undefined;
  }

  /** Hands over the events so far and starts a new list (one per push, reusing this object). */
  take(carry?: Carry): ParserEvent[] {
    const events = this.#events ?? [];
    this.#events = undefined;
    this.#lastText = this.#lastReasoning = this.#lastArgs = undefined;
    this.#put(carry);
    return events;
  }

  text(text: string): void {
    if (text.length === 0) return;
    const last = this.#lastText;
    if (last !== undefined) {
      last.text += text;
      return;
    }
    const event: TextEvent = { type: 'text', text };
    this.push(event);
    this.#lastText = event;
  }

  reasoning(text: string): void {
    if (text.length === 0) return;
    const last = this.#lastReasoning;
    if (last !== undefined) {
      last.text += text;
      return;
    }
    const event: TextEvent = { type: 'reasoning', text };
    this.push(event);
    this.#lastReasoning = event;
  }

  args(callId: string, text: string): void {
    if (text.length === 0) return;
    const last = this.#lastArgs;
    if (last !== undefined && last.callId === callId) {
      last.text += text;
      return;
    }
    const event: ArgsEvent = { type: 'call-args', callId, text };
    this.push(event);
    this.#lastArgs = event;
  }

  push(event: ParserEvent): void {
    if (this.#events === undefined) this.#events = [event];
    else this.#events.push(event);
    this.#lastText = this.#lastReasoning = this.#lastArgs = undefined;
  }

  /**
   * Removes a trailing lone high surrogate from the last fragment, to be emitted first next
   * time: no event ever carries half a character, whatever the split.
   */
  takeCarry(): Carry | undefined {
    const last = this.#lastText ?? this.#lastReasoning ?? this.#lastArgs;
    if (last === undefined) return undefined;
    const code = last.text.charCodeAt(last.text.length - 1);
    if (!(code >= 0xd800 && code <= 0xdbff)) return undefined;
    const carried = last.text.slice(-1);
    if (last.text.length > 1) {
      last.text = last.text.slice(0, -1);
    } else {
      // The fragment was only the half character: it goes, and nothing before it can be extended.
      const events = this.#events!;
      if (events.length > 1) events.pop();
      else this.#events = undefined;
      this.#lastText = this.#lastReasoning = this.#lastArgs = undefined;
    }
    return last.type === 'call-args' ? { type: 'call-args', callId: last.callId, text: carried } : { type: last.type, text: carried };
  }

  #put(carry: Carry | undefined): void {
    if (carry === undefined) return;
    if (carry.type === 'call-args') this.args(carry.callId, carry.text);
    else if (carry.type === 'reasoning') this.reasoning(carry.text);
    else this.text(carry.text);
  }
}
