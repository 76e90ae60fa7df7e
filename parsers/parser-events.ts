/**
 * The parser contract (DESIGN.md "Contracts"). A parser is created per generation, fed the
 * model's text delta by delta with `push`, and flushed with `end`.
 *
 * Invariant: after merging adjacent `text` events, the events are identical however the same
 * text is split into deltas. To keep that true, a parser emits an event at the character where
 * it becomes certain, and emits `text` only up to that character before it.
 */

/** One completed, self-contained unit of a tool call that a plugin can act on at once. */
export type Piece =
  /** A physical line of code, including its trailing "\n" (absent only on the last line). */
  | { kind: 'line'; text: string; lineNo: number }
  /** A JSON value that has just closed, at `path` inside the arguments object. */
  | { kind: 'field'; path: Array<string | number>; value: unknown }
  /** One finished plan step. */
  | { kind: 'step'; index: number; tool: string; args: unknown[]; raw: string };

export type ParserEvent =
  | { type: 'text'; text: string }
  | { type: 'call-start'; callId: string; name: string }
  | { type: 'call-piece'; callId: string; piece: Piece }
  | { type: 'call-end'; callId: string; args: Record<string, unknown> }
  | { type: 'malformed'; callId?: string; reason: string };

export interface ToolCallParser {
  push(delta: string): ParserEvent[];
  end(): ParserEvent[];
}

/** Merges adjacent text events, the normal form in which the split-invariance holds. */
export function coalesceText(events: readonly ParserEvent[]): ParserEvent[] {
  const out: ParserEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.type === 'text' && last?.type === 'text') {
      out[out.length - 1] = { type: 'text', text: last.text + e.text };
    } else if (e.type !== 'text' || e.text.length > 0) {
      out.push(e);
    }
  }
  return out;
}
