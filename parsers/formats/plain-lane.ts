import type { EventList } from './event-list.ts';
import type { RawText } from './format-parser.ts';

/** The JSON arguments a plain delta can be written straight into (JsonArguments, JsonCallObject). */
export interface PlainWriter {
  /** Writes `text` if it is plain string content of the call: its callId, else undefined (take the full path). */
  writePlain(text: string, out: EventList): string | undefined;
}

/** Where a parser state sends plain deltas: the call's arguments and the raw text they extend. */
export interface LaneTarget {
  writer: PlainWriter;
  raw: RawText;
}

/**
 * The fast path of `FormatParser.pushPlain`, shared by the JSON formats: the target is looked up
 * once per parser state, not per token, because reading `kind` off a format's many state shapes
 * is a polymorphic (often megamorphic) load, too dear for every token. A state with no target yet
 * is not remembered: a body becomes JSON only at its "{", in the same state object.
 */
export class PlainLane<S> {
  #state: S | undefined;
  #target: LaneTarget | undefined;

  constructor(private readonly targetOf: (state: S) => LaneTarget | undefined) {}

  write(state: S, delta: string, out: EventList): string | undefined {
    if (state !== this.#state) {
      const target = this.targetOf(state);
      if (target === undefined) return undefined;
      this.#state = state;
      this.#target = target;
    }
    const target = this.#target!;
    const callId = target.writer.writePlain(delta, out);
    if (callId !== undefined) target.raw.add(delta);
    return callId;
  }
}
