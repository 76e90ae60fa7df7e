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
