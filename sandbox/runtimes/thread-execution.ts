import { ConveyorError, thrownMessage } from '../../core/errors.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import type { PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolCallContext, ToolExecution, ToolProgress, ToolResult, Verdict } from '../../plugins/plugin-types.ts';
import { ProgressBudget } from '../../plugins/progress-budget.ts';
import { CallClock, ON_ABORT_GRACE_MS } from './call-clock.ts';
import { CallOrder } from './call-order.ts';
import type { HookErrorLog } from './hook-throw.ts';
import { abortReasonOf, invalidArguments, safeParseOr } from './load-plugin-module.ts';
import { START_ALLOWANCE_MS } from './on-load-limit.ts';
import { WorkerWaits } from './worker-waits.ts';
import type { ThreadPool } from './thread-pool.ts';
import type { ThreadTask, ThreadTaskResult } from './thread-worker.ts';


/**
 * One call of a `thread` plugin. Hooks run one after another as pool tasks; ctx.state is passed
 * explicitly (cloned into each task and back), because consecutive hooks may run on different
 * workers. Failures become a ToolResult with ok:false; nothing here throws.
 */
export class ThreadExecution implements ToolExecution {
  private readonly pool: ThreadPool;
  private readonly definition: PluginDefinition;
  private readonly module: string;
  private readonly call: ToolCallContext;
  private readonly controller = new AbortController();
  private state: Record<string, unknown> = {};
  private chain: Promise<unknown>;
  /** The onStart task, settled (never rejected) once it ran or was dropped. */
  private readonly started: Promise<unknown>;
  /** A worker began one of this call's hooks: from then on onAbort has something to release. */
  private hookBegun = false;
  private failure: ToolResult | null = null;
  private finished = false;
  private readonly clock: CallClock;
  /** Settles when a worker first begins one of this call's hooks (or the call ends before that). */
  private readonly firstBegun: Promise<void>;
  private markBegun: () => void = () => undefined;
  /**
   * How long a hook may wait for a worker to take it (the queue, a worker starting, the plugin's
   * import and onLoad): that wait is not the plugin's time, so its own limit does not count it, but
   * a pool that never gets to it must still end the call. Past the onLoad limit, so that a hung
   * onLoad is reported as such, not as a missing worker.
   */
  private readonly startLimitMs: number;
  private readonly onHookError: HookErrorLog;
  /** The call's waits for a worker to begin a hook so far, split as its clock counts them (WorkerWaits). */
  private readonly waits = new WorkerWaits();
  private readonly order: CallOrder;
  /**
   * The Dispatcher's budget, kept here too: each task tells its worker what the call's progress
   * has taken, and past it the worker posts none, so a hook emitting without end costs the
   * gateway's thread no copy and check of each event (progress of a hook arrives before its result).
   */
  private readonly progress = new ProgressBudget();
  private readonly emit = (progress: ToolProgress): void => {
    if (this.progress.take(progress)) this.call.emit(progress);
  };

  constructor(
    pool: ThreadPool,
    definition: PluginDefinition,
    module: string,
    call: ToolCallContext,
    timeoutMs: number,
    onHookError: HookErrorLog = () => undefined,
  ) {
    this.pool = pool;
    this.onHookError = onHookError;
    this.definition = definition;
    this.order = new CallOrder(definition.name);
    this.module = module;
    this.call = call;
    this.startLimitMs = START_ALLOWANCE_MS + pool.onLoadTimeoutMs;
    const onAbort = (): void => this.abort('request aborted');
    if (call.signal.aborted) queueMicrotask(onAbort);
    // Taken off the request's signal when this call finishes (its own controller aborts then).
    else call.signal.addEventListener('abort', onAbort, { once: true, signal: this.controller.signal });
    // The result says how much of the limit went to waiting for a worker; onAbort's reason stays
    // the words every runtime gives it.
    this.clock = new CallClock(timeoutMs, () => this.fail(this.waits.timedOut(timeoutMs), 'sandbox_limit_exceeded', `timed out after ${timeoutMs} ms`));
    this.firstBegun = new Promise<void>((resolve) => (this.markBegun = resolve));
    this.started = this.task('start').then((r) => r && this.absorb(r));
    this.chain = this.started;
  }

  async piece(piece: Piece): Promise<Verdict> {
    this.order.piece();
    const step = this.chain.then(async () => {
      if (this.failure) return undefined;
      const r = await this.task('piece', { piece });
      if (!r) return undefined;
      this.absorb(r);
      return r.reject !== undefined ? ({ verdict: 'reject', reason: r.reject } as const) : undefined;
    });
    this.chain = step;
    return step;
  }

  async end(rawArgs: Record<string, unknown>): Promise<ToolResult> {
    this.order.end();
    // A schema may throw rather than report an issue (a transform that throws): thrown past end(),
    // the call's clock ran on and fired onAbort as a timeout long after. It fails as a hook's throw does.
    const parsed = safeParseOr(this.definition, rawArgs, (failure) => this.stop(failure, abortReasonOf(this.definition.name, failure.content)));
    if (parsed && !parsed.success) this.fail(invalidArguments(parsed.error), 'invalid_arguments', 'invalid arguments');
    try {
      // Every millisecond counts from here, but not before a worker has taken the call at all.
      await this.firstBegun;
      this.clock.finalStretch();
      this.waits.finalStretch();
      await this.chain;
      if (this.failure) return this.failure;
      const r = await this.task('end', { args: rawArgs });
      // The worker's parse threw before onEnd: a hook's throw, so onAbort runs (absorb).
      if (r?.beforeOnEnd) this.absorb(r);
      // The worker's own error (a result it cannot copy back, a malformed ctx.emit) is the call's, as
      // in piece(): "returned no result" hid it. Not through absorb(): onEnd ran, so no onAbort.
      return this.failure ?? (r?.error !== undefined ? failureOf(r.error, r.code) : r?.result) ?? this.errorResult('returned no result', 'sandbox_error');
    } finally {
      // onEnd ran (whatever it returned): the call is over without onAbort, as in every runtime.
      this.settle();
    }
  }

  abort(reason: string): void {
    this.stop(this.errorResult(`was aborted: ${reason}`, 'aborted'), reason);
  }

  private async task(hook: ThreadTask['hook'], extra: Partial<ThreadTask> = {}): Promise<ThreadTaskResult | null> {
    if (this.finished) return null;
    // The call's clock runs from the moment a worker begins the hook: a first call that waits for
    // workers still starting on a busy machine (their tsx, the plugin's imports) is not timed out
    // for it, as the python tool's cell does not count its wait for a free interpreter.
    let over: (() => void) | undefined;
    const unstarted = setTimeout(() => this.fail(`found no worker to run it within ${this.startLimitMs} ms`, 'sandbox_limit_exceeded'), this.startLimitMs);
    const waited = this.waits.begin();
    const begun = (): void => {
      clearTimeout(unstarted);
      this.hookBegun = true;
      waited();
      over ??= this.clock.work();
      this.markBegun();
    };
    try {
      const r = await this.pool.run({ ...this.base(), hook, state: this.state, ...extra }, this.emit, this.controller.signal, begun);
      if (r.thrown) this.onHookError({ ...r.thrown, plugin: this.definition.name, runtime: 'thread', callId: this.call.callId });
      return r;
    } catch (err) {
      if (!this.finished) this.fail(describe(err), err instanceof ConveyorError ? err.code : 'sandbox_error');
      return null;
    } finally {
      clearTimeout(unstarted);
      waited();
      over?.();
      // A task that ended without beginning (its plugin failed to load) leaves nothing to wait for.
      this.markBegun();
    }
  }

  private absorb(r: ThreadTaskResult): void {
    this.state = r.state;
    // A hook threw (or onPiece returned something else than a verdict): the call ends here, as an
    // inline one does, rather than at `end`, so onAbort runs now.
    if (r.error) this.stop(failureOf(r.error, r.code), abortReasonOf(this.definition.name, r.error));
  }

  private base(): Pick<ThreadTask, 'module' | 'plugin' | 'callId' | 'progressUsed'> {
    return { module: this.module, plugin: this.definition.name, callId: this.call.callId, progressUsed: this.progress.used };
  }

  private fail(message: string, code: string, reason = message): void {
    this.stop(this.errorResult(message, code), reason);
  }

  /**
   * The call ends other than by onEnd (aborted, rejected, a hook failed, a limit): it ends with
   * `failure` (or the one it already has), and onAbort gets `reason`.
   */
  private stop(failure: ToolResult, reason: string): void {
    if (this.finished) return;
    this.failure ??= failure;
    this.settle();
    // onAbort releases what onStart took: a call aborted while its onStart still waited for a worker
    // ran no hook, and gets none, as a process call that never had its process. Decided once that
    // task has settled (an abort drops it at once), so a worker that had just begun it counts.
    void this.started.then(() => (this.hookBegun ? this.runAbortHook(reason) : undefined));
  }

  /**
   * onAbort in a task of its own (the call's task in flight, if any, was just aborted with its
   * worker), with ctx.state as the last finished hook left it. It waits for a worker like any hook
   * (startLimitMs at most) and is aborted ON_ABORT_GRACE_MS after it begins, which terminates
   * that worker: a hung onAbort never holds a worker longer. Its progress still reaches the
   * request, as an inline onAbort's does. Nothing waits for it: the call's result is already known.
   */
  private runAbortHook(reason: string): void {
    const stop = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    const unstarted = setTimeout(() => stop.abort(), this.startLimitMs);
    const begun = (): void => {
      clearTimeout(unstarted);
      grace ??= setTimeout(() => stop.abort(), ON_ABORT_GRACE_MS);
    };
    void this.pool
      .run({ ...this.base(), hook: 'abort', reason, state: this.state }, this.emit, stop.signal, begun)
      .catch(() => undefined)
      .finally(() => {
        clearTimeout(unstarted);
        clearTimeout(grace);
      });
  }

  private errorResult(message: string, code: string): ToolResult {
    return { ok: false, content: `error: ${this.definition.name} ${message}`, data: { code, runtime: 'thread' } };
  }

  /** The call is over: stop its clock and any task in flight, and let go of the request's signal. */
  private settle(): void {
    if (this.finished) return;
    this.finished = true;
    this.markBegun();
    this.clock.stop();
    this.controller.abort(this.failure?.content ?? 'call finished');
  }
}

/** A task's error (ThreadTaskResult.error and .code) as the call's result. */
function failureOf(error: string, code: string | undefined): ToolResult {
  return { ok: false, content: error, ...(code ? { data: { code, runtime: 'thread' } } : {}) };
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'ran out of memory (worker heap limit)';
  if (e?.name === 'DataCloneError') return `kept a value in ctx.state that cannot be copied between threads (${String(e.message)})`;
  // An error the worker could not send back either (a DOMException crosses threads as `{}`):
  // say so rather than `[object Object]`.
  if (typeof e === 'object' && e !== null && typeof e.message !== 'string') return 'failed: its worker stopped with an error that could not be copied back to the gateway';
  // The pool's own errors (queue full, shut down) by their words: their class names are the gateway's, not the plugin's.
  return `failed: ${err instanceof ConveyorError ? err.message : thrownMessage(err)}`;
}
