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
 * - the first three events are kept in fields and the array is made at the end with exactly
 *   its events: pushing onto `[]` first grows it to 17 slots, and onto a one-element literal to
 *   19, a measurable part of a push that yields a few events (a line piece and the argument
 *   text around it);
 * - the last event is remembered by kind (`#lastText`…) instead of read back from the array:
 *   events come in six shapes, and reading `.type` off all of them is a megamorphic load.
 */
export class EventList {
  #count = 0;
  #e0: ParserEvent | undefined;
  #e1: ParserEvent | undefined;
  #e2: ParserEvent | undefined;
  /** All the events, once there are more than three. */
  #more: ParserEvent[] | undefined;
  /** The last event, if it is a `text`, `reasoning` or `call-args` fragment (at most one is set). */
  #lastText: TextEvent | undefined;
  #lastReasoning: TextEvent | undefined;
  #lastArgs: ArgsEvent | undefined;

  /** Starts with what the previous push kept back. */
  constructor(carry?: Carry) {
    this.#put(carry);
  }

  /** No event yet (nor a carried half character). */
  get empty(): boolean {
    return this.#count === 0;
  }

  /** The events so far (a new array). */
  get events(): ParserEvent[] {
    switch (this.#count) {
      case 0:
        return [];
      case 1:
        return [this.#e0!];
      case 2:
        return [this.#e0!, this.#e1!];
      case 3:
        return [this.#e0!, this.#e1!, this.#e2!];
      default:
        return this.#more!.slice(0, this.#count);
    }
  }

  /** Hands over the events so far and starts a new list (one per push, reusing this object). */
  take(carry?: Carry): ParserEvent[] {
    const count = this.#count;
    const events = count <= 3 ? this.events : this.#more!;
    if (count !== 0) {
      this.#count = 0;
      this.#e0 = this.#e1 = this.#e2 = undefined;
      this.#more = undefined;
      this.#lastText = this.#lastReasoning = this.#lastArgs = undefined;
    }
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
    const count = this.#count;
    if (count === 0) this.#e0 = event;
    else if (count === 1) this.#e1 = event;
    else if (count === 2) this.#e2 = event;
    else if (count === 3) this.#more = [this.#e0!, this.#e1!, this.#e2!, event];
    else this.#more!.push(event);
    this.#count = count + 1;
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
      const count = this.#count - 1;
      this.#count = count;
      if (count === 0) this.#e0 = undefined;
      else if (count === 1) this.#e1 = undefined;
      else if (count === 2) this.#e2 = undefined;
      else this.#more!.pop();
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
