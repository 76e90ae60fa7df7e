import { thrownMessage } from '../../core/errors.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolPlugin, ToolProgress, ToolResult, Verdict } from '../plugin-types.ts';

export interface ScriptedCall {
  /** Pieces in decode order, as the parser would emit them. */
  pieces?: Piece[];
  /** The whole call's arguments, delivered after the pieces unless a piece was rejected. */
  args: Record<string, unknown>;
  callId?: string;
  /** The model's pace: milliseconds before each piece and before the end (default 0). */
  gapMs?: number;
}

export interface ScriptedRun {
  /** One entry per piece delivered (those of the kind the tool consumes): its verdict (undefined = carry on). */
  verdicts: Verdict[];
  /** Set when a piece was rejected: the call ends there, as the Session would end it. */
  rejected?: string;
  result?: ToolResult;
  progress: ToolProgress[];
}

/**
 * Feeds a scripted stream of pieces to a tool, the way the gateway does during a decode (only
 * the kind it consumes; a reject aborts the call and ends it there), and records what it
 * answered. For plugin authors' tests.
 *
 * @example
 * const run = await runScriptedCall(inlineTool(myPlugin), {
 *   pieces: [{ kind: 'field', path: ['city'], value: 'Paris' }],
 *   args: { city: 'Paris' },
 * });
 * expect(run.rejected).toMatch(/City, ST/);
 */
export async function runScriptedCall(tool: ToolPlugin, call: ScriptedCall, signal = new AbortController().signal): Promise<ScriptedRun> {
  const progress: ToolProgress[] = [];
  const execution = tool.start({ callId: call.callId ?? 'call_test', signal, emit: (p) => progress.push(p) });
  const run: ScriptedRun = { verdicts: [], progress };
  const gap = () => (call.gapMs ? new Promise((resolve) => setTimeout(resolve, call.gapMs)) : undefined);
  // A tool whose piece or end throws (the kit's never do; a hand-written ToolPlugin may) gets the
  // tool error the gateway's Dispatcher gives it, so a test sees what the model would.
  const failed = (err: unknown): ScriptedRun => {
    const message = thrownMessage(err);
    execution.abort(`failed: ${message}`);
    return { ...run, result: { ok: false, content: `error: ${tool.name} failed: ${message}` } };
  };
  for (const piece of call.pieces ?? []) {
    // The gateway hands a tool only the pieces of the kind it consumes.
    if (piece.kind !== tool.consumes) continue;
    await gap();
    let verdict: Verdict;
    try {
      verdict = await execution.piece(piece);
    } catch (err) {
      return failed(err);
    }
    run.verdicts.push(verdict);
    if (verdict?.verdict === 'reject') {
      run.rejected = verdict.reason;
      execution.abort(`rejected: ${verdict.reason}`);
      return run;
    }
  }
  await gap();
  try {
    run.result = await execution.end(call.args);
  } catch (err) {
    return failed(err);
  }
  return run;
}
