import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolCallContext, ToolExecution, ToolPlugin, ToolResult, Verdict } from '../plugin-types.ts';
import { CallClock } from '../../sandbox/runtimes/call-clock.ts';
import { hookFailure, invalidArguments, runEndHook } from '../../sandbox/runtimes/load-plugin-module.ts';
import { lineFieldOf, verdictOf } from './check-definition.ts';
import { parametersJsonSchema, type PluginContext, type PluginDefinition } from './define-plugin.ts';

/**
 * Runs a plugin's hooks in the gateway's own event loop (runtime `inline`). The other runtimes
 * wrap the same hooks behind a worker, isolate or process boundary.
 *
 * @example
 * const tool = inlineTool(definePlugin({
 *   name: 'shout', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }),
 *   consumes: 'call', hooks: { onEnd: ({ text }) => text.toUpperCase() },
 * }));
 * const run = await runScriptedCall(tool, { args: { text: 'hi' } }); // run.result.content === 'HI'
 */
export function inlineTool(definition: PluginDefinition): ToolPlugin {
  void loadInline(definition).catch(() => {});
  return {
    name: definition.name,
    description: definition.description,
    parameters: parametersJsonSchema(definition),
    consumes: definition.consumes,
    lineField: lineFieldOf(definition),
    sideEffects: definition.sideEffects === true,
    start: (ctx) => new InlineExecution(definition, ctx),
  };
}

const loaded = new WeakMap<PluginDefinition, Promise<void>>();
const NOTHING_TO_LOAD = Promise.resolve();

/** The plugin's onLoad, once per definition in the gateway's process; its calls start after it. */
function loadInline(definition: PluginDefinition): Promise<void> {
  if (!definition.hooks.onLoad) return NOTHING_TO_LOAD;
  let loading = loaded.get(definition);
  if (!loading) {
    loading = Promise.resolve().then(() => definition.hooks.onLoad?.());
    loaded.set(definition, loading);
  }
  return loading;
}

/** The call's time limit when the definition sets none: the other runtimes' default. */
export const INLINE_DEFAULT_TIMEOUT_MS = 30_000;
/**
 * How long a call waits for the plugin's onLoad. That wait is not the call's time (the other
 * runtimes do not count their plugin's import and onLoad either), but one that never settles must
 * still end the call, as a worker or process that never comes does.
 */
const LOAD_LIMIT_MS = 30_000;

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
  /** Takes this call's listener off the request's signal. */
  private detach: () => void = () => undefined;
  private stop: (value: typeof STOPPED) => void = () => undefined;
  /** Settles when the call stops waiting for its hooks. */
  private readonly stopped = new Promise<typeof STOPPED>((resolve) => (this.stop = resolve));

  constructor(definition: PluginDefinition, call: ToolCallContext) {
    this.definition = definition;
    this.ctx = { callId: call.callId, signal: this.controller.signal, state: {}, emit: call.emit };
    const timeoutMs = definition.limits?.timeoutMs ?? INLINE_DEFAULT_TIMEOUT_MS;
    // 0: none, for a plugin whose work another boundary bounds (the python tool's sandbox).
    this.clock = timeoutMs === 0 ? undefined : new CallClock(timeoutMs, () => this.failWith(`timed out after ${timeoutMs} ms`, 'sandbox_limit_exceeded'));
    const onStart = definition.hooks.onStart;
    const start = () => (onStart ? this.run(() => onStart(this.ctx)) : undefined);
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
    const step = this.chain.then(async (): Promise<Verdict> => {
      const onPiece = this.definition.hooks.onPiece;
      if (this.failure || !onPiece) return undefined;
      const ran = await this.run(() => onPiece(piece, this.ctx));
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
    const parsed = this.definition.parameters.safeParse(rawArgs);
    if (!parsed.success) this.failWith(invalidArguments(parsed.error), 'invalid_arguments', 'invalid arguments');
    this.clock?.finalStretch();
    await this.chain;
    const ran = await this.run(() => runEndHook(this.definition, rawArgs, this.ctx));
    const result = this.failure ?? ran?.value ?? this.errorResult('returned no result', 'sandbox_error');
    this.finished = true;
    this.clock?.stop();
    this.detach();
    return result;
  }

  /**
   * The request went away or the call was rejected: ctx.signal and onAbort tell the plugin. Its
   * hooks are still awaited (on the clock): an inline plugin may answer an aborted call with what
   * it got done (the python tool's cell output up to the abort).
   */
  abort(reason: string): void {
    if (this.finished || this.controller.signal.aborted) return;
    this.detach();
    this.controller.abort(reason);
    // A throwing onAbort is the plugin's bug and must not become an uncaught exception in the gateway.
    try {
      const cleanup: unknown = this.definition.hooks.onAbort?.(reason, this.ctx);
      if (cleanup instanceof Promise) cleanup.catch(() => {});
    } catch {
      // Nothing to tell: the call is over either way.
    }
  }

  /** Waits for onLoad (bounded, not on the call's clock); false when the call cannot go on. */
  private async load(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<typeof STOPPED>((resolve) => {
      timer = setTimeout(() => {
        this.failWith(`onLoad did not finish within ${LOAD_LIMIT_MS} ms`, 'sandbox_limit_exceeded');
        resolve(STOPPED);
      }, LOAD_LIMIT_MS);
    });
    try {
      return (await Promise.race([loadInline(this.definition), limit, this.stopped])) !== STOPPED && !this.failure;
    } catch (err) {
      this.failThrown(err);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs one hook on the call's clock; undefined when it threw (the call's failure is set) or
   * the call stopped waiting for it.
   */
  private async run<T>(hook: () => T | Promise<T>): Promise<{ value: T } | undefined> {
    if (this.failure) return undefined;
    const over = this.clock?.work();
    try {
      const value = await Promise.race([Promise.resolve().then(hook), this.stopped]);
      return value === STOPPED || this.failure ? undefined : { value: value as T };
    } catch (err) {
      this.failThrown(err);
      return undefined;
    } finally {
      over?.();
    }
  }

  /** The call's own error (a time limit, bad arguments), with its code in data as the other runtimes give it. */
  private failWith(message: string, code: string, reason = message): void {
    this.fail(this.errorResult(message, code), reason);
  }

  /** A hook threw: the call's error is the plugin's, worded as every runtime words it. */
  private failThrown(err: unknown): void {
    const failure = hookFailure(this.definition.name, err);
    this.fail(failure, failure.content.replace(`error: ${this.definition.name} `, ''));
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
