import type { Piece } from '../parsers/parser-events.ts';

/**
 * What the Dispatcher needs from a tool. The authoring kit (definePlugin) builds these; the
 * built-in python plugin implements it directly.
 */
export interface ToolPlugin {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments object, sent upstream in `tools`. */
  readonly parameters: Record<string, unknown>;
  /** The piece kind this tool acts on as it arrives; 'call' = only the whole call. */
  readonly consumes: Piece['kind'] | 'call';
  /** With `consumes: 'line'`: the string argument whose completed lines are the pieces (the parsers' `lineFields`). */
  readonly lineField?: string;
  /**
   * `end` changes the world (definePlugin's `sideEffects`): whoever runs the call must not call
   * `end` while the call may yet be dropped, e.g. by a sibling call's reject in the same round.
   */
  readonly sideEffects?: boolean;
  /** Opens one execution for one call; called on `call-start` (so it may pre-warm). */
  start(ctx: ToolCallContext): ToolExecution;
}

/** What one call's execution is given when it opens (`ToolPlugin.start`). */
export interface ToolCallContext {
  readonly callId: string;
  /** Aborted when the request is cancelled; the execution must stop and release its process. */
  readonly signal: AbortSignal;
  /** Progress the tool reports while it runs (statement done, output chunk…), for the timeline and client. */
  readonly emit: (event: ToolProgress) => void;
  /**
   * Whose call this is: the gateway's id of the API key the request came with; absent on a
   * gateway without keys. A kept process (`reuseProcess`) only ever serves calls of the tenant
   * whose call it served, so what one client's call leaves in it never reaches another's.
   */
  readonly tenant?: string;
}

/**
 * Progress a running call reports: a unit finished (a Python statement, a plan step: the timeline's
 * `unit-done`, the client's `tool_call.progress`) or live output (`tool_call.output`).
 */
export type ToolProgress =
  | { type: 'unit-done'; detail: string }
  | { type: 'output'; stream: 'stdout' | 'stderr'; text: string };

/** A verdict a tool may return for a piece: a reject cuts the decode short. */
export type Verdict = { verdict: 'reject'; reason: string } | undefined;

/**
 * One call being run: pieces as they complete, then `end` once, or `abort` instead. The Dispatcher
 * awaits each piece's verdict before the next piece of the same call.
 */
export interface ToolExecution {
  /** A completed piece, delivered the moment the parser emits it (or after decode when partial execution is off). */
  piece(piece: Piece): Verdict | Promise<Verdict>;
  /** The call has been fully decoded; resolves with the observation the model will see. */
  end(args: Record<string, unknown>): Promise<ToolResult>;
  /** Stop now and release everything; idempotent. */
  abort(reason: string): void;
}

/** How a call ended: the observation the model reads next round, and data for clients. */
export interface ToolResult {
  /** False when the tool failed (exception, limit, crash); the content then describes the error. */
  ok: boolean;
  /** The observation text appended as the tool message. */
  content: string;
  /** Optional structured data for clients and benchmarks (not sent to the model). */
  data?: Record<string, unknown>;
}
