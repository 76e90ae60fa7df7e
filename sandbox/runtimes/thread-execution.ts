import { ConveyorError, thrownMessage } from '../../core/errors.ts';
import type { Piece } from '../../parsers/parser-events.ts';
import type { PluginDefinition } from '../../plugins/kit/define-plugin.ts';
import type { ToolCallContext, ToolExecution, ToolResult, Verdict } from '../../plugins/plugin-types.ts';
import { CallClock } from './call-clock.ts';
import { invalidArguments } from './load-plugin-module.ts';
import type { ThreadPool } from './thread-pool.ts';
import type { ThreadTask, ThreadTaskResult } from './thread-worker.ts';

/** Time the onAbort hook gets in a worker after a call is aborted. */
const ABORT_HOOK_MS = 1000;
/**
 * How long a hook may wait for a worker to take it (the queue, a worker starting, the plugin's
 * import and onLoad): that wait is not the plugin's time, so its own limit does not count it, but a
 * pool that never gets to it must still end the call.
 */
const START_LIMIT_MS = 30_000;

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
  private failure: ToolResult | null = null;
  private finished = false;
  private readonly clock: CallClock;
  /** Settles when a worker first begins one of this call's hooks (or the call ends before that). */
  private readonly firstBegun: Promise<void>;
  private markBegun: () => void = () => undefined;

  constructor(
    pool: ThreadPool,
    definition: PluginDefinition,
    module: string,
    call: ToolCallContext,
    timeoutMs: number,
  ) {
    this.pool = pool;
    this.definition = definition;
    this.module = module;
    this.call = call;
    const onAbort = (): void => this.abort('request aborted');
    if (call.signal.aborted) queueMicrotask(onAbort);
    // Taken off the request's signal when this call finishes (its own controller aborts then).
    else call.signal.addEventListener('abort', onAbort, { once: true, signal: this.controller.signal });
    this.clock = new CallClock(timeoutMs, () => this.fail(`timed out after ${timeoutMs} ms`, 'sandbox_limit_exceeded'));
    this.firstBegun = new Promise<void>((resolve) => (this.markBegun = resolve));
    this.chain = this.task('start').then((r) => r && this.absorb(r));
  }

  async piece(piece: Piece): Promise<Verdict> {
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
    const parsed = this.definition.parameters.safeParse(rawArgs);
    if (!parsed.success) this.fail(invalidArguments(parsed.error), 'invalid_arguments');
    // Every millisecond counts from here, but not before a worker has taken the call at all.
    await this.firstBegun;
    this.clock.finalStretch();
    await this.chain;
    if (this.failure) return this.failure;
    const r = await this.task('end', { args: rawArgs });
    const result = this.failure ?? r?.result ?? this.errorResult('returned no result', 'sandbox_error');
    this.settle();
    return result;
  }

  abort(reason: string): void {
    if (this.finished) return;
    this.failure ??= this.errorResult(`was aborted: ${reason}`, 'aborted');
    this.settle();
    // Best effort: let the plugin release what onStart took, in a worker of its own.
    void this.pool
      .run({ ...this.base(), hook: 'abort', reason, state: this.state }, () => undefined, AbortSignal.timeout(ABORT_HOOK_MS))
      .catch(() => undefined);
  }

  private async task(hook: ThreadTask['hook'], extra: Partial<ThreadTask> = {}): Promise<ThreadTaskResult | null> {
    if (this.finished) return null;
    // The call's clock runs from the moment a worker begins the hook: a first call that waits for
    // workers still starting on a busy machine (their tsx, the plugin's imports) is not timed out
    // for it, as the python tool's cell does not count its wait for a free interpreter.
    let over: (() => void) | undefined;
    const unstarted = setTimeout(() => this.fail(`found no worker to run it within ${START_LIMIT_MS} ms`, 'sandbox_limit_exceeded'), START_LIMIT_MS);
    const begun = (): void => {
      clearTimeout(unstarted);
      over ??= this.clock.work();
      this.markBegun();
    };
    try {
      return await this.pool.run({ ...this.base(), hook, state: this.state, ...extra }, this.call.emit, this.controller.signal, begun);
    } catch (err) {
      if (!this.finished) this.fail(describe(err), err instanceof ConveyorError ? err.code : 'sandbox_error');
      return null;
    } finally {
      clearTimeout(unstarted);
      over?.();
      // A task that ended without beginning (its plugin failed to load) leaves nothing to wait for.
      this.markBegun();
    }
  }

  private absorb(r: ThreadTaskResult): void {
    this.state = r.state;
    if (r.error && !this.failure) this.failure = { ok: false, content: r.error };
  }

  private base(): Pick<ThreadTask, 'module' | 'plugin' | 'callId'> {
    return { module: this.module, plugin: this.definition.name, callId: this.call.callId };
  }

  private fail(message: string, code: string): void {
    if (this.finished) return;
    this.failure = this.errorResult(message, code);
    this.settle();
  }

  private errorResult(message: string, code: string): ToolResult {
    return { ok: false, content: `error: ${this.definition.name} ${message}`, data: { code, runtime: 'thread' } };
  }

  private settle(): void {
    if (this.finished) return;
    this.finished = true;
    this.markBegun();
    this.clock.stop();
    this.controller.abort(this.failure?.content ?? 'call finished');
  }
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'ran out of memory (worker heap limit)';
  if (e?.name === 'DataCloneError') return `kept a value in ctx.state that cannot be copied between threads (${String(e.message)})`;
  // An error the worker could not send back either (a DOMException crosses threads as `{}`):
  // say so rather than `[object Object]`.
  if (typeof e === 'object' && e !== null && typeof e.message !== 'string') return 'failed: its worker stopped with an error that could not be copied back to the gateway';
  return `failed: ${thrownMessage(err)}`;
}
