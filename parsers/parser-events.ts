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

/** A piece as a timeline names it: `line 3`, `field location`, `step 2` (the bench finds the validation field by it). */
export function pieceLabel(piece: Piece): string {
  if (piece.kind === 'line') return `line ${piece.lineNo}`;
  if (piece.kind === 'field') return `field ${piece.path.join('.')}`;
  return `step ${piece.index}`;
}

export type ParserEvent =
  /** Visible content, forwarded to the client unchanged. */
  | { type: 'text'; text: string }
  /** Reasoning (`<think>…</think>`, harmony analysis channel): forwarded as reasoning, never as content. */
  | { type: 'reasoning'; text: string }
  | { type: 'call-start'; callId: string; name: string }
  /**
   * A fragment of the call's arguments exactly as the model wrote them (never re-serialised);
   * the concatenation of a call's fragments is its complete arguments text.
   */
  | { type: 'call-args'; callId: string; text: string }
  | { type: 'call-piece'; callId: string; piece: Piece }
  | { type: 'call-end'; callId: string; args: Record<string, unknown> }
  | { type: 'malformed'; callId?: string; reason: string };

export interface ToolCallParser {
  push(delta: string): ParserEvent[];
  /**
   * The output is over. `cut`: it did not end, it was cut (the token limit), so a call still open
   * is unfinished and ends `malformed`, where a format whose calls have no closing marker (a code
   * block, which CommonMark runs to the end of the document) would otherwise end it as it stands.
   */
  end(cut?: boolean): ParserEvent[];
  /**
   * push() without allocating for the commonest token: when `delta` is just the next fragment
   * of the arguments being written, returns that call's id, standing for the events
   * `[{ type: 'call-args', callId, text: delta }]`; otherwise returns what push would. Optional:
   * a caller drives a parser without it through push alone. The gateway's per-token path uses it
   * (a fresh array and event per token were about a fifth of a JSON format's time per token).
   */
  pushFast?(delta: string): string | ParserEvent[];
  /**
   * The upstream splits the model's reasoning off itself (vLLM's `--reasoning-parser` streams it in
   * a field of its own): the text holds no reasoning block, so one the prompt opened
   * (`startsInReasoning`) is not waited for. Optional: only the reasoning parser does anything.
   */
  upstreamSplitsReasoning?(): void;
}

/**
 * Merges adjacent text (and reasoning, and same-call argument) fragments: the normal form in
 * which the split-invariance holds.
 */
export function coalesceText(events: readonly ParserEvent[]): ParserEvent[] {
  const out: ParserEvent[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.type === 'text' || e.type === 'reasoning') {
      if (e.text.length === 0) continue;
      if (last?.type === e.type) out[out.length - 1] = { ...last, text: last.text + e.text };
      else out.push(e);
    } else if (e.type === 'call-args') {
      if (e.text.length === 0) continue;
      if (last?.type === 'call-args' && last.callId === e.callId) out[out.length - 1] = { ...last, text: last.text + e.text };
      else out.push(e);
    } else {
      out.push(e);
    }
  }
  return out;
}
