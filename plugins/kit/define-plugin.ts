import { z } from 'zod';
import type { Piece } from '../../parsers/parser-events.ts';
import type { ToolProgress, ToolResult, Verdict } from '../plugin-types.ts';
import { definitionProblem } from './check-definition.ts';
import type { GuestJs } from './guest-js.ts';

/**
 * Where a plugin's hooks run.
 * - `inline`: in the gateway's event loop. Only for trusted, I/O-bound code that never runs what
 *   the model wrote (an HTTP fetch, a schema check).
 * - `thread`: a worker thread from a shared piscina pool. Trusted, CPU-bound code; not a
 *   security boundary, and its heap limit is no memory boundary either: a worker that runs out
 *   of heap can abort the whole process (nodejs/node#47224), so code whose allocations the
 *   model controls (a matrix size) belongs in `process`.
 * - `isolate`: an isolated-vm isolate (Node >= 22, isolated-vm >= 6.2.0) for untrusted JS; falls
 *   back to `process` where isolates are unavailable.
 * - `process`: a child process (any language) over framed IPC, with rlimits; the strongest.
 *
 * @example
 * // a plugin that runs what the model wrote: in the sandbox, with limits only `process` honours
 * definePlugin({ name: 'run_sql', description: 'Runs a read-only SQL query', parameters: z.object({ query: z.string() }),
 *   consumes: 'field', runtime: 'process', limits: { timeoutMs: 5000, memoryMb: 128 }, hooks: { onEnd: ({ query }) => query } });
 */
export type PluginRuntime = 'inline' | 'thread' | 'isolate' | 'process';

/**
 * A plugin's limits; each is refused by definePlugin where its runtime would ignore it
 * (plugins/README.md, Runtimes). Each is a positive number, and each but timeoutMs a whole one
 * (the sandbox sets them as rlimits and a heap size).
 *
 * @example
 * limits: { timeoutMs: 10_000, memoryMb: 128, cpuSeconds: 5 } // with runtime: 'process'
 */
export interface PluginLimits {
  /**
   * The call's time limit. While the model is still writing the call, only the time the hooks
   * are at work counts (a task running or queued, a verdict awaited; not the wait for the next
   * piece), so a slow decode never times a call out; from the end of the call to its result,
   * every millisecond counts. The same in `inline`, where a hook that overruns cannot be stopped
   * (it runs on the gateway's loop): the call stops waiting for it, aborts ctx.signal and ends with
   * the timeout error. 30 s when left out, in every runtime; `inline` may say 0 for none, when
   * something else bounds the work (the python tool's sandbox bounds each cell). At most
   * 2147483647 (about 24.8 days, the longest timer Node keeps).
   */
  timeoutMs?: number;
  /**
   * `process`: the child's data segment (RLIMIT_DATA) and V8 heap; `isolate`: each guest
   * isolate's memoryLimit. `thread` uses the pool-wide worker heap limit instead. definePlugin
   * refuses a limit its runtime ignores (this one in `inline`/`thread`, the rest outside `process`).
   */
  memoryMb?: number;
  /**
   * `process` only: CPU seconds the plugin's own work may use (RLIMIT_CPU). A JS plugin's process
   * gets 2 s more for its start-up (Node, tsx, loading the plugin), which is not charged to it.
   */
  cpuSeconds?: number;
  /** `process` only: largest file the plugin may write (RLIMIT_FSIZE). */
  fileSizeMb?: number;
  /** `process` only: processes and threads the call may run (RLIMIT_NPROC, where the sandbox can scope it: sandbox/runtimes/README.md). */
  maxProcesses?: number;
}

/**
 * What every hook receives about the call it serves.
 *
 * @example
 * hooks: {
 *   onPiece: (piece, ctx) => {
 *     ctx.state['pieces'] = Number(ctx.state['pieces'] ?? 0) + 1; // this call's alone
 *     ctx.emit({ type: 'unit-done', detail: `piece ${String(ctx.state['pieces'])} of ${ctx.callId}` });
 *   },
 *   onEnd: (args, ctx) => (ctx.signal.aborted ? 'stopped' : `${String(ctx.state['pieces'] ?? 0)} pieces`),
 * }
 */
export interface PluginContext {
  readonly callId: string;
  /**
   * Aborted, with the reason onAbort gets, when the call ends other than by onEnd finishing it: the
   * request went away, the call was rejected (onPiece's verdict, or the gateway), a hook threw or
   * onPiece returned something else than a verdict, the arguments failed the schema, or the call ran
   * out of time (`limits.timeoutMs`). Aborted already when onAbort runs, in every runtime. A hook
   * still running then sees it abort in `inline` and `process` (until the process is killed);
   * in `thread` that hook's worker is terminated instead.
   */
  readonly signal: AbortSignal;
  /**
   * Per-call scratch space shared by this call's hooks (e.g. an opened connection). In runtime
   * `thread` it travels with each hook to whichever worker runs it, so it must hold only
   * structured-cloneable values (no sockets, functions or class instances).
   */
  readonly state: Record<string, unknown>;
  /**
   * Reports progress to the timeline and the client: `{ type: 'unit-done', detail }` (a string of
   * at most 10,000 characters; the client's `tool_call.progress`) or `{ type: 'output', stream:
   * 'stdout' | 'stderr', text }` (at most 1,000,000 characters; `tool_call.output`). Any other
   * event fails the call, naming what is wrong, in every runtime.
   *
   * @example
   * ctx.emit({ type: 'unit-done', detail: `row ${n} fetched` });
   * ctx.emit({ type: 'output', stream: 'stdout', text: 'compiling…\n' });
   */
  emit(progress: ToolProgress): void;
  /**
   * Evaluates untrusted JS (runtime `isolate`, and `process` where isolates are unavailable);
   * undefined in `inline` and `thread`, which are no boundary for untrusted code.
   */
  readonly guest?: GuestJs;
}

/**
 * Returned by a piece hook to cut the decode short: the model stops generating this call, and the
 * reason goes back to it as the tool's result, so say what to do instead.
 *
 * @example
 * onPiece: (piece) => (piece.kind === 'field' && piece.path[0] === 'year' && Number(piece.value) > 2100
 *   ? reject('year must be 2100 or earlier')
 *   : undefined),
 */
export function reject(reason: string): Verdict {
  return { verdict: 'reject', reason };
}

/**
 * The code of a plugin, called as a call is decoded: onLoad once, then per call onStart, onPiece
 * for each piece of the kind it consumes, and onEnd, or onAbort when the call ends otherwise.
 * Only onEnd is required.
 *
 * @example
 * hooks: {
 *   onStart: (ctx) => { ctx.state['lines'] = 0; },
 *   onPiece: (piece, ctx) => { ctx.state['lines'] = Number(ctx.state['lines']) + 1; },
 *   onEnd: ({ text }, ctx) => `${String(ctx.state['lines'] || text.split('\n').length)} lines`,
 * }
 */
export interface PluginHooks<Args> {
  /**
   * Once where the calls will run, before the first: in each worker or plugin process (a thread
   * worker as it starts), or in the gateway for `inline` (when the tool is made). Load libraries
   * and compile what every call needs, so no call waits for it; nothing per call. If it throws,
   * each call fails with `error: <tool> onLoad failed: <message>`; while it is still running 30 s after it began
   * (createRuntimePools({ onLoadTimeoutMs })), each call fails with `error: <tool> onLoad did not
   * finish within 30000 ms`, in every runtime (calls after a late finish run).
   */
  onLoad?(): void | Promise<void>;
  /** The call's name has been decoded: pre-warm (open a database, pre-connect). Must not commit anything. */
  onStart?(ctx: PluginContext): void | Promise<void>;
  /**
   * One completed piece of the call (a `line`, a closed JSON `field`, a plan `step`). Return
   * nothing to carry on, or `reject(...)` to abort the decode; any other value fails the call.
   */
  onPiece?(piece: Piece, ctx: PluginContext): Verdict | void | Promise<Verdict | void>;
  /** The whole call is decoded and its arguments passed the schema: do the work (side effects are allowed only here). */
  onEnd(args: Args, ctx: PluginContext): Promise<ToolResult | string> | ToolResult | string;
  /**
   * The call ended other than by onEnd finishing it (the cases of `ctx.signal`): release what
   * onStart/onPiece took. Runs once, in every runtime, with `reason` such as `request aborted`,
   * `rejected: <reason>`, `failed: <message>`, `invalid arguments` or `timed out after N ms`, and
   * ctx.state as the finished hooks left it. Not after onEnd ran, even one that threw, nor after
   * onLoad failed, nor for a call that ended before its onStart began (no hook ran: an `inline`
   * call waiting for onLoad, a `thread` one for a worker, a `process` one for its process). `thread`
   * and `process` wait for it, a promise it returns included, 1 s at most (`ON_ABORT_GRACE_MS`,
   * from when a worker begins it, or from the abort sent to the process): then the worker task is
   * aborted or the process killed, so a hung onAbort holds neither for longer. In `process` it runs
   * in the call's own process, so not for a call that never got one (no hook ran) nor where a hook
   * blocks that process's event loop. Its progress (ctx.emit) still reaches the request. Must not
   * throw: a throw is swallowed.
   */
  // `void`, not `void | Promise<void>`: that would refuse `(r, ctx) => drafts.delete(ctx.callId)`.
  onAbort?(reason: string, ctx: PluginContext): void;
}

/**
 * What definePlugin takes and returns: a tool's name, arguments schema, piece kind, runtime,
 * limits and hooks. Plain data plus code; toolFromPlugin turns it into the running tool.
 *
 * @example
 * const definition: PluginDefinition = definePlugin({
 *   name: 'echo', description: 'Says the text back', parameters: z.object({ text: z.string() }),
 *   consumes: 'call', hooks: { onEnd: ({ text }) => text },
 * });
 */
export interface PluginDefinition<S extends z.ZodType = z.ZodType> {
  /** The tool's name, by OpenAI function-name rules (1-64 letters, digits, `_` or `-`). */
  name: string;
  /** Sent upstream in `tools`: what the model reads to decide when to call the tool (not empty). */
  description: string;
  /** Arguments schema: validates the decoded call and yields the JSON Schema sent upstream in `tools`. */
  parameters: S;
  /** The piece kind onPiece receives as it is decoded; `call` = only onEnd with the whole call (an onPiece is refused). */
  consumes: Piece['kind'] | 'call';
  /**
   * With `consumes: 'line'` only (refused elsewhere): the string argument whose completed lines are the pieces, as the
   * model writes it. May be left out when the arguments have exactly one string field.
   */
  lineField?: string;
  /** Where the hooks run; `inline` when left out (see PluginRuntime). */
  runtime?: PluginRuntime;
  /** True if onEnd changes the world (writes, sends): then nothing may happen before the call is whole and valid. */
  sideEffects?: boolean;
  /**
   * Runtime `process` only. By default each call runs in a fresh process, killed when the call
   * ends: nothing one call leaves behind reaches the next, which may be another user's request.
   * True: a process that answered its call with a result serves the plugin's later calls (kept
   * `idleMs`, 30 s, between them), so a call does not wait for Node to start when calls come
   * faster than the pool's warm spares. Only for plugins whose calls leave nothing behind: what a
   * call puts in module state, the process's memory or its working directory, later calls see. An
   * aborted or timed-out call's process is still killed, and a process is retired before its CPU
   * limit could cut a call short (each call keeps `limits.cpuSeconds`) and after 1000 calls.
   */
  reuseProcess?: boolean;
  /** The call's time limit and, in runtime `process` / `isolate`, its resource limits. */
  limits?: PluginLimits;
  /** The code: onEnd, and optionally onLoad, onStart, onPiece, onAbort (a plugin in another language: defineCommandPlugin). */
  hooks: PluginHooks<z.output<S>>;
}

/**
 * Declares a tool for partial execution. The result is plain data plus hooks; the gateway turns
 * it into a running tool for the chosen runtime. Throws a TypeError naming what is wrong (an
 * unknown key, with the one meant: `unknown key 'timeout' in limits (did you mean 'timeoutMs'?)`).
 *
 * @example
 * export default definePlugin({
 *   name: 'shout',
 *   description: 'Upper-cases a text',
 *   parameters: z.object({ text: z.string() }),
 *   consumes: 'field',
 *   hooks: {
 *     onPiece: (piece) => (piece.kind === 'field' && piece.value === '' ? reject('empty text') : undefined),
 *     onEnd: ({ text }) => text.toUpperCase(),
 *   },
 * });
 */
export function definePlugin<S extends z.ZodType>(definition: PluginDefinition<S>): PluginDefinition<S> {
  const problem = definitionProblem(definition, 'plugin');
  if (problem !== undefined) throw new TypeError(`plugin ${typeof definition?.name === 'string' ? definition.name : '(unnamed)'}: ${problem}`);
  return definition;
}

/**
 * The JSON Schema of a plugin's arguments, as sent upstream in `tools[].function.parameters`: the
 * input side of its zod schema (a field with a default is not required), without `$schema`.
 *
 * @example
 * parametersJsonSchema({ parameters: z.object({ text: z.string(), times: z.number().default(1) }) });
 * // { type: 'object', properties: { text: { type: 'string' }, times: { default: 1, type: 'number' } }, required: ['text'] }
 */
export function parametersJsonSchema(definition: Pick<PluginDefinition, 'parameters'>): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(definition.parameters, { io: 'input' }) as Record<string, unknown>;
  return schema;
}
