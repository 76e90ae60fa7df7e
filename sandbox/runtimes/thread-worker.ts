import { workerData, type MessagePort } from 'node:worker_threads';
import type { Piece } from '../../parsers/parser-events.ts';
import type { PluginContext } from '../../plugins/kit/define-plugin.ts';
import type { ToolResult } from '../../plugins/plugin-types.ts';
import { progressOf, verdictOf } from '../../plugins/kit/check-hook-output.ts';
import { ProgressBudget, type ProgressUsed } from '../../plugins/progress-budget.ts';
import { hookThrowOf, type HookName, type HookThrow } from './hook-throw.ts';
import { hookFailure, loadPluginForCalls, runEndHook } from './load-plugin-module.ts';
import { ON_LOAD_LIMIT_MS, START_ALLOWANCE_MS } from './on-load-limit.ts';
import { checkPluginName } from './plugin-name-mismatch.ts';
import { captureThreadOutput } from './thread-output.ts';

export const END_OF_PROGRESS = '__end_of_progress__';
/** Sent on a task's port once its plugin is loaded and its hook is about to run: the call's clock starts here. */
export const HOOK_BEGUN = '__hook_begun__';

/** One hook of one call, run in whichever worker piscina picks. */
export interface ThreadTask {
  module: string;
  plugin: string;
  /** `load` only imports the plugin module (warming a worker before its first call). */
  hook: 'load' | 'start' | 'piece' | 'end' | 'abort';
  callId: string;
  /** ctx.state as the previous hook left it (structured clone). */
  state: Record<string, unknown>;
  piece?: Piece;
  args?: Record<string, unknown>;
  reason?: string;
  /** Carries ctx.emit progress back to the gateway while the hook runs. */
  port: MessagePort;
  /**
   * What the call's progress has taken of its budget before this hook (plugins/progress-budget.ts):
   * past it the worker posts none (the Dispatcher would drop it), but still checks each emit.
   */
  progressUsed?: ProgressUsed;
}

export interface ThreadTaskResult {
  state: Record<string, unknown>;
  reject?: string;
  result?: ToolResult;
  /** The hook threw (start/piece): the call ends with this error at `end`. */
  error?: string;
  /** The error's data.code where it is the runtime's, not the plugin's (onLoad past its limit). */
  code?: string;
  /** `end` only: `error` came before onEnd began (the schema threw as it parsed), so onAbort runs. */
  beforeOnEnd?: true;
  /** A hook threw: its stack, for the gateway log (the error says only the message). */
  thrown?: HookThrow;
}

/** The pool's onLoad limit (ThreadPool passes it in workerData); the default where none is given. */
const onLoadLimitMs: number = (workerData as { onLoadTimeoutMs?: number } | null)?.onLoadTimeoutMs ?? ON_LOAD_LIMIT_MS;

/** The plugin whose hook runs now (one task at a time per worker), or the module being preloaded. */
let printing = 'thread worker';
const outputChannel = (workerData as { outputChannel?: string } | null)?.outputChannel;
if (outputChannel !== undefined) captureThreadOutput(outputChannel, () => printing);

/**
 * Imports plugin modules (and runs their onLoad) ahead of their calls; the worker takes tasks
 * meanwhile, each waiting for its own module only. A module that fails to load fails at its first
 * call instead, and so does one whose onLoad is still running onLoadLimitMs after it began (`onLoad
 * did not finish within N ms`). The backstop is for an import that never ends.
 */
export async function preloadPluginModules(modules: readonly string[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(modules.map((module) => loadPluginForCalls(module, onLoadLimitMs).catch(() => undefined))),
    new Promise((resolve) => (timer = setTimeout(resolve, START_ALLOWANCE_MS + onLoadLimitMs))),
  ]);
  clearTimeout(timer);
}

/**
 * Runs one hook. Hooks of one call may land on different workers, so nothing of the call stays
 * here: its state travels with every task and comes back with the result.
 */
export default async function runThreadTask(task: ThreadTask): Promise<ThreadTaskResult> {
  // Aborted only for onAbort (the call is over, and ctx.signal says so there as in every runtime):
  // a call that ends while another of its hooks runs terminates that whole worker (piscina).
  const stop = new AbortController();
  // A malformed event fails the call, as in every runtime: the first one's error is the hook's
  // outcome once it returns (the task cannot end the call sooner). Checked here, before the
  // post, which a BigInt detail would make throw in the hook.
  let emitError: string | undefined;
  const budget = ProgressBudget.after(task.progressUsed ?? { events: 0, text: 0 });
  const ctx: PluginContext = {
    callId: task.callId,
    signal: stop.signal,
    state: task.state,
    emit: (progress) => {
      const checked = progressOf(task.plugin, progress);
      if ('error' in checked) emitError ??= checked.error;
      // The event that goes past the budget is still posted, for the Dispatcher's note.
      else if (budget.take(checked.progress)) task.port.postMessage(checked.progress);
    },
  };
  const failedEmit = (): ThreadTaskResult | undefined => (emitError === undefined ? undefined : copyable({ state: ctx.state, error: emitError }, task.plugin));
  let running: HookName | undefined;
  printing = task.plugin;
  try {
    const definition = await loadPluginForCalls(task.module, onLoadLimitMs);
    checkPluginName(definition.name, task.plugin);
    task.port.postMessage(HOOK_BEGUN);
    switch (task.hook) {
      case 'load':
        return { state: ctx.state };
      case 'start':
        running = 'onStart';
        await definition.hooks.onStart?.(ctx);
        return failedEmit() ?? copyable({ state: ctx.state }, task.plugin);
      case 'piece': {
        running = 'onPiece';
        const checked = verdictOf(task.plugin, await definition.hooks.onPiece?.(task.piece as Piece, ctx));
        if ('error' in checked) return copyable({ state: ctx.state, error: checked.error }, task.plugin);
        return failedEmit() ?? copyable({ state: ctx.state, ...(checked.verdict ? { reject: checked.verdict.reason } : {}) }, task.plugin);
      }
      case 'end': {
        let thrown: HookThrow | undefined;
        let parseThrew = false;
        const result = await runEndHook(definition, task.args ?? {}, ctx, { onThrow: (t) => (thrown = t), onParseThrow: () => (parseThrew = true) });
        if (parseThrew) return copyable({ state: ctx.state, error: result.content, beforeOnEnd: true }, task.plugin);
        return failedEmit() ?? copyable({ state: ctx.state, result, ...(thrown ? { thrown } : {}) }, task.plugin);
      }
      case 'abort':
        stop.abort(task.reason);
        // Awaited (an async onAbort included), so the gateway's grace bounds all of it; the state
        // is not needed after it.
        await definition.hooks.onAbort?.(task.reason ?? 'aborted', ctx);
        return { state: {} };
    }
  } catch (err) {
    const failure = hookFailure(task.plugin, err);
    const code = failure.data?.['code'];
    const thrown = hookThrowOf(running, err);
    return failedEmit() ?? copyable({ state: ctx.state, error: failure.content, ...(typeof code === 'string' ? { code } : {}), ...(thrown ? { thrown } : {}) }, task.plugin);
  } finally {
    // Progress travels on its own port, which piscina's result may overtake: mark the end.
    task.port.postMessage(END_OF_PROGRESS);
    task.port.close();
  }
}

/**
 * `result` if it can travel back to the gateway, else the call's error saying what cannot. piscina
 * posts the result itself: a function (or socket, or class instance) in ctx.state made that post
 * throw a DataCloneError in the worker, which killed the worker and reached the gateway as an empty
 * object (`failed: [object Object]`). Cloning here first costs one more copy of the state per hook.
 */
function copyable(result: ThreadTaskResult, plugin: string): ThreadTaskResult {
  try {
    structuredClone(result);
    return result;
  } catch (err) {
    const key = Object.keys(result.state).find((k) => !clones(result.state[k]));
    const where = key === undefined ? 'returned a result' : `kept a value in ctx.state[${JSON.stringify(key)}]`;
    const why = err instanceof Error ? ` (${err.message})` : '';
    return { state: {}, error: `error: ${plugin} ${where} that cannot be copied between threads${why}: in runtime thread it holds plain data only` };
  }
}

function clones(value: unknown): boolean {
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}
