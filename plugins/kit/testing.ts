import { thrownMessage } from '../../core/errors.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolExecution, ToolPlugin, ToolProgress, ToolResult, Verdict } from '../plugin-types.ts';
import { ProgressBudget } from '../progress-budget.ts';

/**
 * One call as runScriptedCall plays it: the pieces the parser would emit while the model writes
 * the call, then its whole arguments.
 *
 * @example
 * const call: ScriptedCall = {
 *   pieces: [{ kind: 'line', text: 'one two\n', lineNo: 1 }, { kind: 'line', text: 'three', lineNo: 2 }],
 *   args: { text: 'one two\nthree' },
 *   gapMs: 50, // the model's pace, to test limits.timeoutMs
 * };
 */
export interface ScriptedCall {
  /** Pieces in decode order, as the parser would emit them. */
  pieces?: Piece[];
  /** The whole call's arguments, delivered after the pieces unless a piece was rejected. */
  args: Record<string, unknown>;
  callId?: string;
  /** The model's pace: milliseconds before each piece and before the end (default 0). */
  gapMs?: number;
  /** Whose call it is (ToolCallContext.tenant: the gateway's id of the client's API key); default none. */
  tenant?: string;
}

/**
 * What a tool answered to a ScriptedCall: a verdict per piece, then either `rejected` (the reason
 * of the first reject; no `result`: onEnd did not run) or `result` (onEnd's result, or the tool
 * error the model would read of a hook that threw, a wrong return or invalid arguments; whole: the
 * gateway cuts its `content` to maxObservationChars, 20,000 by default, before the model reads it),
 * and every `ctx.emit` progress event in order: as the gateway passes them on (`progress`), and
 * those emitted after the call ended, which it drops (`afterEnd`).
 *
 * @example
 * const run: ScriptedRun = await runScriptedCall(tool, { args: { text: 'hi' } });
 * if (run.result?.ok) console.log(run.result.content);
 */
export interface ScriptedRun {
  /** One entry per piece delivered (those of the kind the tool consumes): its verdict (undefined = carry on). */
  verdicts: Verdict[];
  /** Set when a piece was rejected: the call ends there, as the Session would end it. */
  rejected?: string;
  /** onEnd's result or the call's tool error, whole (the model reads at most maxObservationChars of its content). */
  result?: ToolResult;
  /** What the client would see of the call's progress: emitted before it ended, within the per-call budget. */
  progress: ToolProgress[];
  /**
   * What the tool emitted after its call had ended: the gateway passes none of it on. Here so a
   * test can see onAbort run (in thread and process runtimes it runs after the call's result is
   * known) or catch a timer a hook left behind.
   */
  afterEnd: ToolProgress[];
}

/**
 * Feeds a scripted stream of pieces to a tool, the way the gateway does during a decode (only
 * the kind it consumes; a reject aborts the call and ends it there), and records what it
 * answered. For plugin authors' tests. `signal` is the request's: aborted before onEnd begins, `result` is
 * `error: <tool> was aborted: request aborted` (onEnd never runs), and the tool's onAbort runs if its
 * onStart had begun (an inline tool's starts as the call does).
 *
 * @example
 * import weather from './plugins/kit/examples/location-check-plugin.ts'; // rejects a location not "City, ST"
 * const run = await runScriptedCall(inlineTool(weather), {
 *   pieces: [{ kind: 'field', path: ['location'], value: 'Paris' }],
 *   args: { location: 'Paris' },
 * });
 * expect(run.rejected).toMatch(/City, ST/); // and run.result is undefined: onEnd never ran
 */
export async function runScriptedCall(tool: ToolPlugin, call: ScriptedCall, signal = new AbortController().signal): Promise<ScriptedRun> {
  const progress: ToolProgress[] = [];
  const afterEnd: ToolProgress[] = [];
  const budget = new ProgressBudget();
  let ended = false;
  const emit = (emitted: ToolProgress): void => {
    if (ended) return void afterEnd.push(emitted);
    const passed = budget.take(emitted);
    if (passed) progress.push(passed);
  };
  const run: ScriptedRun = { verdicts: [], progress, afterEnd };
  let execution: ToolExecution;
  try {
    execution = tool.start({ callId: call.callId ?? 'call_test', signal, emit, ...(call.tenant === undefined ? {} : { tenant: call.tenant }) });
  } catch (err) {
    // As the Dispatcher answers a start() that throws: that call's error, with nothing to abort.
    ended = true;
    return { ...run, result: { ok: false, content: `error: ${tool.name} failed: ${thrownMessage(err)}` } };
  }
  const gap = () => (call.gapMs ? new Promise((resolve) => setTimeout(resolve, call.gapMs)) : undefined);
  // A tool whose start, piece or end throws (the kit's never do; a hand-written ToolPlugin may) gets the
  // tool error the gateway's Dispatcher gives it, so a test sees what the model would.
  const failed = (err: unknown): ScriptedRun => {
    const message = thrownMessage(err);
    execution.abort(`failed: ${message}`);
    ended = true;
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
      // After the abort: an onAbort that runs within it (inline) still reaches the client in the
      // gateway, whose call ends only with its result.
      execution.abort(`rejected: ${verdict.reason}`);
      ended = true;
      return run;
    }
  }
  await gap();
  try {
    run.result = await execution.end(call.args);
  } catch (err) {
    return failed(err);
  }
  ended = true;
  return run;
}
