import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult, Verdict } from '../plugin-types.ts';
import { CallClock } from '../../sandbox/runtimes/call-clock.ts';
import { CallOrder } from '../../sandbox/runtimes/call-order.ts';
import { hookThrowOf, type HookErrorLog, type HookName, type HookThrow } from '../../sandbox/runtimes/hook-throw.ts';
import { abortReasonOf, hookFailure, invalidArguments, runEndHook, safeParseOr } from '../../sandbox/runtimes/load-plugin-module.ts';
import { boundedOnLoad, ON_LOAD_LIMIT_MS } from '../../sandbox/runtimes/on-load-limit.ts';
import { lineFieldOf } from './line-field.ts';
import { progressOf, verdictOf } from './check-hook-output.ts';
import { parametersJsonSchema, type PluginContext, type PluginDefinition } from './define-plugin.ts';

/**
 * What inlineTool takes besides the definition.
 *
 * @example
 * const tool = inlineTool(definition, { onLoadTimeoutMs: 5000 }); // its calls fail once onLoad has run 5 s
 */
export interface InlineToolOptions {
  /**
   * How long the plugin's onLoad may take (30 s when left out), from when the tool is made: past
   * it, calls fail with `onLoad did not finish within N ms`. toolFromPlugin passes the pools' own
   * (createRuntimePools({ onLoadTimeoutMs })). The first tool made of a definition sets it.
   */
  onLoadTimeoutMs?: number;
  /** Each hook throw, with its stack, for the gateway log (toolFromPlugin passes the pools' own, RuntimePoolsOptions.onHookError). */
  onHookError?: HookErrorLog;
}

/**
 * Runs a plugin's hooks in the gateway's own event loop (runtime `inline`). The other runtimes
 * wrap the same hooks behind a worker, isolate or process boundary. Its onLoad starts now.
 *
 * @example
 * const tool = inlineTool(definePlugin({
 *   name: 'shout', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }),
 *   consumes: 'call', hooks: { onEnd: ({ text }) => text.toUpperCase() },
 * }));
 * const run = await runScriptedCall(tool, { args: { text: 'hi' } }); // run.result.content === 'HI'
 */
export function inlineTool(definition: PluginDefinition, options: InlineToolOptions = {}): ToolPlugin {
  loadInline(definition, options.onLoadTimeoutMs ?? ON_LOAD_LIMIT_MS);
  return {
    name: definition.name,
    description: definition.description,
    parameters: parametersJsonSchema(definition),
    consumes: definition.consumes,
    lineField: lineFieldOf(definition),
    sideEffects: definition.sideEffects === true,
    start: (ctx) => new InlineExecution(definition, ctx, options.onHookError),
  };
}

const loaded = new WeakMap<PluginDefinition, () => Promise<void>>();

/**
 * The plugin's onLoad, started once per definition in the gateway's process; what its calls await
 * before onStart. That wait is not the call's time (the other runtimes do not count their plugin's
 * import and onLoad either), but an onLoad that never settles still ends the calls, with the same
 * words as in a worker or a plugin process (on-load-limit.ts).
 */
function loadInline(definition: PluginDefinition, onLoadLimitMs = ON_LOAD_LIMIT_MS): () => Promise<void> {
  let whenLoaded = loaded.get(definition);
  if (!whenLoaded) {
    whenLoaded = boundedOnLoad(definition.hooks.onLoad, onLoadLimitMs);
    loaded.set(definition, whenLoaded);
  }
  return whenLoaded;
}

/** The call's time limit when the definition sets none: the other runtimes' default. */
export const INLINE_DEFAULT_TIMEOUT_MS = 30_000;

/** What a hook's race resolves to when the call stopped waiting for it (it timed out or failed). */
const STOPPED = Symbol('stopped');

/**
 * One call of an inline plugin. Its hooks run one after another; each is timed with the same
 * CallClock as a worker's or a process's, so a hook that never settles ends the call with the
 * same `timed out after N ms` error. An inline hook cannot be killed: the call only stops waiting
 * for it (and aborts ctx.signal, which a well-behaved hook listens to).
 */
class InlineExecution implements ToolExecution {
  private readonly definition: PluginDefinition;
  private readonly ctx: PluginContext;
  /** The call's own signal: the request's, and aborted too when this call is (rejected, timed out). */
  private readonly controller = new AbortController();
  private readonly clock: CallClock | undefined;
  /** Hooks of one call run in order: onStart, each onPiece, then onEnd. */
  private chain: Promise<unknown>;
  private failure: ToolResult | null = null;
  private finished = false;
  /**
   * The call got past onLoad to its onStart (begun, or none to run). Before that no hook ran, so
   * there is nothing for onAbort to release: it runs only after, as a process call's runs only
   * once the call has its process (onLoad threw or ran past its limit: never).
   */
  private reached = false;
  /** Takes this call's listener off the request's signal. */
  private detach: () => void = () => undefined;
  private stop: (value: typeof STOPPED) => void = () => undefined;
  /** Settles when the call stops waiting for its hooks. */
  private readonly stopped = new Promise<typeof STOPPED>((resolve) => (this.stop = resolve));
  private readonly report: (thrown: HookThrow) => void;
  /** Set (null) while onEnd runs: the first malformed ctx.emit then, the call's result once onEnd returns. */
  private endEmitError?: ToolResult | null;
  private readonly order: CallOrder;

  constructor(definition: PluginDefinition, call: ToolCallContext, onHookError: HookErrorLog = () => undefined) {
    this.definition = definition;
    this.order = new CallOrder(definition.name);
    this.report = (thrown) => onHookError({ ...thrown, plugin: definition.name, runtime: 'inline', callId: call.callId });
    // Checked as every runtime checks it: a malformed event fails the call, naming the field; in
    // onEnd, once it returns (no onAbort while onEnd may be committing), as the other runtimes do.
    const emit = (progress: unknown): void => {
      const checked = progressOf(definition.name, progress);
      if (!('error' in checked)) call.emit(checked.progress);
      else if (this.endEmitError !== undefined) this.endEmitError ??= { ok: false, content: checked.error };
      else this.fail({ ok: false, content: checked.error }, abortReasonOf(definition.name, checked.error));
    };
    this.ctx = { callId: call.callId, signal: this.controller.signal, state: {}, emit };
    const timeoutMs = definition.limits?.timeoutMs ?? INLINE_DEFAULT_TIMEOUT_MS;
    // 0: none, for a plugin whose work another boundary bounds (the python tool's sandbox).
    this.clock = timeoutMs === 0 ? undefined : new CallClock(timeoutMs, () => this.failWith(`timed out after ${timeoutMs} ms`, 'sandbox_limit_exceeded'));
    const onStart = definition.hooks.onStart;
    const start = () => {
      this.reached = true;
      return onStart ? this.run('onStart', () => onStart(this.ctx)) : undefined;
    };
    // Without an onLoad to wait for, onStart begins at once (on the next microtask), as the call opens.
    this.chain = definition.hooks.onLoad ? this.load().then((ok) => (ok ? start() : undefined)) : Promise.resolve(start());
    if (call.signal.aborted) queueMicrotask(() => this.abort('request aborted'));
    else {
      // Removed when the call ends: a request's signal outlives its calls, and one listener left
      // per call is a leak (and Node's MaxListenersExceededWarning past ten calls in a request).
      const onAbort = (): void => this.abort('request aborted');
      call.signal.addEventListener('abort', onAbort, { once: true });
      this.detach = () => call.signal.removeEventListener('abort', onAbort);
    }
  }

  async piece(piece: Piece): Promise<Verdict> {
    this.order.piece();
    const step = this.chain.then(async (): Promise<Verdict> => {
      const onPiece = this.definition.hooks.onPiece;
      if (this.failure || !onPiece) return undefined;
      const ran = await this.run('onPiece', () => onPiece(piece, this.ctx));
      if (!ran) return undefined;
      const checked = verdictOf(this.definition.name, ran.value);
      if ('error' in checked) {
        this.fail({ ok: false, content: checked.error }, checked.error.slice('error: '.length));
        return undefined;
      }
      return checked.verdict;
    });
    this.chain = step;
    return step;
  }

  async end(rawArgs: Record<string, unknown>): Promise<ToolResult> {
    this.order.end();
    // A schema may throw rather than report an issue (a transform that throws, an async refine):
    // thrown past end(), the call's clock ran on and fired onAbort as a timeout long after.
    const parsed = safeParseOr(this.definition, rawArgs, (failure) => this.fail(failure, abortReasonOf(this.definition.name, failure.content)));
    if (parsed && !parsed.success) this.failWith(invalidArguments(parsed.error), 'invalid_arguments', 'invalid arguments');
    this.clock?.finalStretch();
    await this.chain;
    this.endEmitError = null;
    const ran = await this.run('onEnd', () => runEndHook(this.definition, rawArgs, this.ctx, { onThrow: this.report, onParseThrow: (failure) => this.fail(failure, abortReasonOf(this.definition.name, failure.content)) }));
    const result = this.failure ?? this.endEmitError ?? ran?.value ?? this.errorResult('returned no result', 'sandbox_error');
    this.finished = true;
    this.clock?.stop();
    this.detach();
    return result;
  }

  /**
   * The request went away or the call was rejected: ctx.signal and onAbort tell the plugin. A hook
   * already running is still awaited (on the clock): an onEnd under way may answer an aborted call
   * with what it got done (the python tool's cell output up to the abort).
   */
  abort(reason: string): void {
    if (this.finished || this.controller.signal.aborted) return;
    // Before onEnd has begun, the call ends here, as in the other runtimes: an onPiece still
    // running is awaited, but no hook starts after onAbort (an end() that came anyway, e.g. for a
    // call whose decode was whole before its client left, ran onEnd's side effect after onAbort).
    if (this.endEmitError === undefined) this.failure ??= this.errorResult(`was aborted: ${reason}`, 'aborted');
    this.detach();
    this.controller.abort(reason);
    // A throwing onAbort is the plugin's bug and must not become an uncaught exception in the gateway.
    if (!this.reached) return;
    try {
      const cleanup: unknown = this.definition.hooks.onAbort?.(reason, this.ctx);
      if (cleanup instanceof Promise) cleanup.catch(() => {});
    } catch {
      // Nothing to tell: the call is over either way.
    }
  }

  /**
   * Waits for onLoad (bounded, not on the call's clock); false when the call cannot go on. An
   * abort ends the wait: an aborted call's end() waited for onLoad (30 s at most), where the other
   * runtimes' end at once.
   */
  private async load(): Promise<boolean> {
    const signal = this.controller.signal;
    const aborted = new Promise<typeof STOPPED>((resolve) => signal.addEventListener('abort', () => resolve(STOPPED), { once: true }));
    try {
      return (await Promise.race([loadInline(this.definition)(), this.stopped, aborted])) !== STOPPED && !this.failure;
    } catch (err) {
      this.failThrown(err, undefined);
      return false;
    }
  }

  /**
   * Runs one hook on the call's clock; undefined when it threw (the call's failure is set) or
   * the call stopped waiting for it.
   */
  private async run<T>(name: HookName, hook: () => T | Promise<T>): Promise<{ value: T } | undefined> {
    if (this.failure) return undefined;
    const over = this.clock?.work();
    try {
      const value = await Promise.race([Promise.resolve().then(hook), this.stopped]);
      return value === STOPPED || this.failure ? undefined : { value: value as T };
    } catch (err) {
      this.failThrown(err, name);
      return undefined;
    } finally {
      over?.();
    }
  }

  /** The call's own error (a time limit, bad arguments), with its code in data as the other runtimes give it. */
  private failWith(message: string, code: string, reason = message): void {
    this.fail(this.errorResult(message, code), reason);
  }

  /**
   * A hook threw (or onLoad ran past its limit): the call's error, worded as every runtime words it;
   * the stack goes to the log, once per call (the first failure is the call's).
   */
  private failThrown(err: unknown, hook: HookName | undefined): void {
    const thrown = this.failure || this.finished ? undefined : hookThrowOf(hook, err);
    if (thrown) this.report(thrown);
    const failure = hookFailure(this.definition.name, err);
    const withRuntime = failure.data ? { ...failure, data: { ...failure.data, runtime: 'inline' } } : failure;
    this.fail(withRuntime, abortReasonOf(this.definition.name, failure.content));
  }

  /**
   * The call is over with this error: stop the clock and the wait for any hook, abort ctx.signal
   * and let onAbort release what onStart/onPiece took.
   */
  private fail(failure: ToolResult, reason: string): void {
    if (this.finished || this.failure) return;
    this.failure = failure;
    this.clock?.stop();
    this.stop(STOPPED);
    this.abort(reason);
  }

  private errorResult(message: string, code: string): ToolResult {
    return { ok: false, content: `error: ${this.definition.name} ${message}`, data: { code, runtime: 'inline' } };
  }
}
