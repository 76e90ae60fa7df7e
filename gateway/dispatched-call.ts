import type { Piece } from '../parsers/parser-events.ts';
import type { ToolExecution, ToolPlugin, ToolResult } from '../plugins/plugin-types.ts';

/** What a call came to: its arguments as decoded and its tool's result (or why it was not run). */
export interface CallOutcome {
  callId: string;
  name: string;
  args: Record<string, unknown>;
  result: ToolResult;
}

/** One call of a round as the Dispatcher tracks it, from its `call-start` to its outcome. */
export interface DispatchedCall {
  callId: string;
  name: string;
  plugin: ToolPlugin | undefined;
  execution?: ToolExecution;
  /** Pieces of one call reach its tool strictly in order; each waits for the previous verdict. */
  chain: Promise<void>;
  buffered: Piece[];
  args?: Record<string, unknown>;
  /** Top-level fields decoded so far: what the history shows of a call cut short before its end. */
  decodedFields: Record<string, unknown>;
  outcome?: Promise<CallOutcome>;
  /** Its `tool-start` is marked: it gets exactly one `tool-end`, however it ends. */
  toolStarted?: boolean;
  /** Its `tool-end` is marked (its result, or abortAll or cancel before one came). */
  toolEnded?: boolean;
  rejected?: string;
  /** A piece hook threw (a plugin bug, not the model's call): the call's error, reported at its end. */
  failed?: string;
  /** The parser found the call malformed after it started: it never happened. */
  cancelled?: boolean;
  /**
   * Why the call is answered without being run (or run to its end): the decode stopped before
   * the model finished it (a reject cut the round), so it is never run on half its arguments; or
   * the request is failing anyway.
   */
  notRun?: string;
}

/**
 * A throwing abort hook (a plugin bug) must not stop what called it: inside a piece's chain it left
 * a reject unreported (the decode ran on) and the chain rejected with nothing awaiting it, an
 * unhandled rejection that ends the gateway's process.
 */
export function abortQuietly(execution: ToolExecution | undefined, reason: string): void {
  try {
    execution?.abort(reason);
  } catch {
    // The call is over either way.
  }
}
