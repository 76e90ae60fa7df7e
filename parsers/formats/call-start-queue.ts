import type { Piece } from '../parser-events.ts';
import type { EventList } from './event-list.ts';

type Queued = { args: string } | { piece: Piece; lineField?: string };

/**
 * A JSON call object's argument text and pieces until its call-start: keys may come in any order,
 * so arguments written before the name are queued here, then released in order right after
 * call-start, and where each event lands depends only on the text, never on the split.
 */
export class CallStartQueue {
  #callId: string | undefined;
  /** The tool's `lineFields` argument: line pieces of other arguments are not sent. */
  #lineField: string | undefined;
  #queue: Queued[] = [];

  /** Set once call-start has been emitted. */
  get callId(): string | undefined {
    return this.#callId;
  }

  get lineField(): string | undefined {
    return this.#lineField;
  }

  /** Emits call-start, then everything queued before it, in order. */
  start(callId: string, name: string, lineField: string | undefined, out: EventList): void {
    this.#callId = callId;
    this.#lineField = lineField;
    out.push({ type: 'call-start', callId, name });
    for (const item of this.#queue) {
      if ('args' in item) this.args(item.args, out);
      else this.piece(item.piece, item.lineField, out);
    }
    this.#queue = [];
  }

  /** The next `call-args` fragment, or queued before call-start. */
  args(text: string, out: EventList): void {
    if (text.length === 0) return;
    if (this.#callId === undefined) this.#queue.push({ args: text });
    else out.args(this.#callId, text);
  }

  /** A piece; a line piece only if it is of the tool's line field (`lineField`: the argument it is of). */
  piece(piece: Piece, lineField: string | undefined, out: EventList): void {
    if (this.#callId === undefined) this.#queue.push({ piece, lineField });
    else if (piece.kind !== 'line' || lineField === this.#lineField) out.push({ type: 'call-piece', callId: this.#callId, piece });
  }

  /** The call failed: what was queued is never sent (its text goes out as the attempt's raw text). */
  clear(): void {
    this.#queue = [];
  }
}
