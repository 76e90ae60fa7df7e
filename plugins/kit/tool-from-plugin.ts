import { existsSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import type { ToolCallContext, ToolExecution, ToolPlugin } from '../plugin-types.ts';
import { PLUGIN_HOST_ISOLATES, PLUGIN_HOST_STARTUP_CPU_S, pluginHostArgv, sandboxReadPaths } from '../../sandbox/runtimes/node-recipe.ts';
import { DEFAULT_PROCESS_LIMITS, GATEWAY_ROOT, nodeDataHeadroomMb, type ProcessLimits } from '../../sandbox/runtimes/process-launch.ts';
import type { ProcessRecipe } from '../../sandbox/runtimes/process-pool.ts';
import { RemoteExecution, type RemoteLease } from '../../sandbox/runtimes/remote-execution.ts';
import type { RuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';
import { ThreadExecution } from '../../sandbox/runtimes/thread-execution.ts';
import { START_ALLOWANCE_MS } from '../../sandbox/runtimes/on-load-limit.ts';
import { definitionProblem } from './check-definition.ts';
import { isCommandPlugin, type CommandPluginDefinition } from './define-command-plugin.ts';
import { parametersJsonSchema, type PluginDefinition, type PluginRuntime } from './define-plugin.ts';
import { lineFieldOf } from './line-field.ts';
import { inlineTool } from './inline-tool.ts';

/**
 * Where toolFromPlugin finds what a runtime needs besides the definition: the module to import
 * (`moduleUrl`), the shared pools, or another language's command.
 *
 * @example
 * const options: ToolFromPluginOptions = { moduleUrl: new URL('./my-plugin.ts', import.meta.url), pools, readOnlyPaths: ['/data'] };
 */
export interface ToolFromPluginOptions {
  /**
   * URL of the module whose default export is `definition` (pass `import.meta.url` from that
   * module). Workers and plugin processes import it themselves: hooks are code, not data, so they
   * cannot be sent. Required for `thread`, `isolate` and JS `process` plugins.
   */
  moduleUrl?: string | URL;
  /**
   * Runtime `process` only: run this command instead of Node, for a plugin written in another
   * language. It must speak the plugin protocol on fd 3 (sandbox/runtimes/plugin-protocol.ts);
   * `definition` then supplies only the name, description, schema, piece kind and limits. It
   * replaces a defineCommandPlugin definition's own `command`, and gives one that has none.
   */
  command?: readonly string[];
  /** The gateway's shared pools (createRuntimePools). Required for every runtime but `inline`. */
  pools?: RuntimePools;
  /** Extra host paths the sandboxed process may read (e.g. a database file's directory). */
  readOnlyPaths?: readonly string[];
}

/**
 * A ToolPlugin that runs in one of the kit's runtimes.
 *
 * @example
 * const tool: RuntimeTool = toolFromPlugin(wordCount, { moduleUrl, pools });
 * tool.warm(); // runtime 'process': a spare process starts now, not at the first call
 * console.log(tool.runtime); // 'process'
 */
export interface RuntimeTool extends ToolPlugin {
  /** The runtime the definition asked for (`isolate` may still run in `process`: see the result's data). */
  readonly runtime: PluginRuntime;
  /** Starts warm spare processes now (runtime `process`), so the first call does not wait for Node. */
  warm(): void;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_GUEST_MEMORY_MB = 64;

/**
 * Turns a plugin definition into the tool the Dispatcher runs, in the definition's runtime:
 * `inline` (the gateway's loop), `thread` (the shared piscina pool), `isolate` (a shared
 * isolated-vm host process; the `process` runtime where isolated-vm is unavailable) or `process`
 * (a fresh sandboxed process per call). Crashes, hangs and limits become a ToolResult with
 * ok:false for that call only. A definition not made by definePlugin (or defineCommandPlugin) is
 * checked as they check one: a TypeError names what is wrong.
 *
 * @example
 * // my-tools/word-count-plugin.ts (plugins/kit/examples/word-count-plugin.ts is a fuller one)
 * export default definePlugin({
 *   name: 'word_count', description: 'Counts words', runtime: 'process',
 *   parameters: z.object({ text: z.string() }), consumes: 'call',
 *   hooks: { onEnd: ({ text }) => String(text.split(/\s+/).filter(Boolean).length) },
 * });
 * // gateway setup
 * const pools = createRuntimePools();
 * const tool = toolFromPlugin(wordCount, { moduleUrl: new URL('./my-tools/word-count-plugin.ts', import.meta.url), pools });
 */
export function toolFromPlugin(definition: PluginDefinition | CommandPluginDefinition, options: ToolFromPluginOptions = {}): RuntimeTool {
  const external = isCommandPlugin(definition);
  // Checked again here, as where the gateway loads a module: a definition built by hand (a spread
  // with a field changed, a literal cast to the type) never met definePlugin's check, and a bad name
  // or a JSON Schema for `parameters` made a tool that upstream, or every call, then refused.
  const problem = definitionProblem(definition, external ? 'command' : 'plugin');
  if (problem !== undefined) throw new TypeError(`plugin ${typeof definition?.name === 'string' ? definition.name : '(unnamed)'}: ${problem}`);
  const command = options.command ?? (external ? definition.command : undefined);
  // A plain object with neither (the definition of a plugin in another language, its command forgotten) has nothing to run.
  if (external && !command) {
    throw new TypeError(
      `plugin ${definition.name}: it has no hooks and no command, so nothing to run: a JS plugin's code is its hooks (definePlugin({ …, hooks: { onEnd } })); ` +
        "one in another language is run by its command (defineCommandPlugin({ …, command: ['/usr/bin/python3', '/abs/plugin.py'] }), or toolFromPlugin(definition, { command, pools }))",
    );
  }
  const runtime = definition.runtime ?? (external ? 'process' : 'inline');
  if (command && runtime !== 'process') throw new TypeError(`plugin ${definition.name}: a command runs in runtime "process" only, not "${runtime}"`);
  const base = {
    name: definition.name,
    description: definition.description,
    parameters: parametersJsonSchema(definition),
    consumes: definition.consumes,
    lineField: lineFieldOf(definition),
    sideEffects: definition.sideEffects === true,
    runtime,
  };
  const hooked = definition as PluginDefinition;
  const pools = options.pools;
  if (runtime === 'inline') {
    return { ...inlineTool(hooked, pools ? { onLoadTimeoutMs: pools.onLoadTimeoutMs, onHookError: pools.onHookError } : {}), runtime, warm: () => undefined };
  }
  if (!pools) throw new TypeError(`plugin ${definition.name}: runtime "${runtime}" needs options.pools (createRuntimePools())`);
  const moduleUrl = options.moduleUrl === undefined ? undefined : String(options.moduleUrl);
  if (!moduleUrl && !command) {
    throw new TypeError(`plugin ${definition.name}: runtime "${runtime}" needs options.moduleUrl (the URL of the module that default-exports it)`);
  }
  const timeoutMs = definition.limits?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // The wait for a worker or process includes a JS plugin's onLoad, which has a limit of its own.
  const startLimitMs = START_ALLOWANCE_MS + pools.onLoadTimeoutMs;

  if (runtime === 'thread') {
    return { ...base, warm: () => pools.thread.warm({ module: moduleUrl as string, name: definition.name }), start: (ctx) => new ThreadExecution(pools.thread, hooked, moduleUrl as string, ctx, timeoutMs, pools.onHookError) };
  }

  const recipe = processRecipe(definition, moduleUrl, command, options, pools.onLoadTimeoutMs);
  const processLease = (signal: AbortSignal, tenant: string | undefined): Promise<RemoteLease> => pools.process.acquire(recipe, signal, tenant);
  const warm = (): void => {
    void pools.process.ready().then(() => pools.process.warm(recipe), () => undefined);
  };
  if (runtime === 'process') {
    return {
      ...base,
      warm,
      start: (ctx: ToolCallContext): ToolExecution =>
        new RemoteExecution(ctx, { definition, runtime: 'process', ...(moduleUrl && !command ? { module: moduleUrl } : {}), timeoutMs, startLimitMs, acquire: processLease, onHookError: pools.onHookError }),
    };
  }

  // isolate: the shared host where isolated-vm works, else the process runtime (reported per result).
  const readPaths = sandboxReadPaths(GATEWAY_ROOT, moduleUrl, options.readOnlyPaths);
  const acquire = async (signal: AbortSignal, tenant: string | undefined): Promise<RemoteLease> => {
    const support = await pools.isolate.ensure(readPaths);
    if (support.available) return pools.isolate.acquire(readPaths, signal);
    const lease = await processLease(signal, tenant);
    return { proc: lease.proc, done: (reason, ending) => lease.done(reason, ending), data: { runtime: 'process', requestedRuntime: 'isolate', fallbackReason: support.reason } };
  };
  return {
    ...base,
    // Where isolates are off, the calls go to the process runtime: warm its spares then.
    warm: () => {
      void pools.isolate.ensure(readPaths).then((support) => (support.available ? undefined : warm()), () => undefined);
    },
    start: (ctx) =>
      new RemoteExecution(ctx, {
        definition,
        runtime: 'isolate',
        module: moduleUrl as string,
        memoryMb: definition.limits?.memoryMb ?? DEFAULT_GUEST_MEMORY_MB,
        timeoutMs,
        startLimitMs,
        acquire,
        onHookError: pools.onHookError,
      }),
  };
}

function processRecipe(
  definition: PluginDefinition | CommandPluginDefinition,
  moduleUrl: string | undefined,
  command: readonly string[] | undefined,
  options: ToolFromPluginOptions,
  onLoadLimitMs: number,
): ProcessRecipe {
  const own = definition.limits ?? {};
  // An isolate plugin's memoryMb sizes each guest isolate; its fallback process needs Node's own heap.
  const memoryMb = definition.runtime === 'isolate' ? Math.max(own.memoryMb ?? 0, DEFAULT_PROCESS_LIMITS.memoryMb) : own.memoryMb;
  const limits: ProcessLimits = {
    ...DEFAULT_PROCESS_LIMITS,
    timeoutMs: own.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(memoryMb !== undefined ? { memoryMb } : {}),
    ...(own.cpuSeconds !== undefined ? { cpuSeconds: own.cpuSeconds } : {}),
    ...(own.fileSizeMb !== undefined ? { fileSizeMb: own.fileSizeMb } : {}),
    ...(own.maxProcesses !== undefined ? { maxProcesses: own.maxProcesses } : {}),
  };
  if (command) {
    const argv = [...command];
    // A script named by absolute path must be visible inside the sandbox.
    const scriptDirs = argv.filter((a) => isAbsolute(a) && existsSync(a) && !a.startsWith('/usr/')).map((a) => dirname(a));
    const readOnlyPaths = [...new Set([...scriptDirs, ...(options.readOnlyPaths ?? [])])];
    return {
      key: recipeKey(['command', definition.name, argv.join('\0'), JSON.stringify(limits)], readOnlyPaths),
      label: definition.name,
      argv,
      readOnlyPaths,
      limits,
      dataMb: limits.memoryMb,
      cpuSeconds: limits.cpuSeconds,
    };
  }
  const argv = pluginHostArgv({ guest: 'node-vm', heapMb: limits.memoryMb, preload: moduleUrl as string, onLoadLimitMs });
  const readOnlyPaths = sandboxReadPaths(GATEWAY_ROOT, moduleUrl, options.readOnlyPaths);
  return {
    key: recipeKey(['node', definition.name, moduleUrl as string, JSON.stringify(limits)], readOnlyPaths),
    label: definition.name,
    argv,
    readOnlyPaths,
    limits,
    dataMb: limits.memoryMb + nodeDataHeadroomMb(PLUGIN_HOST_ISOLATES),
    cpuSeconds: limits.cpuSeconds + PLUGIN_HOST_STARTUP_CPU_S,
    // An isolate plugin falling back to `process` never asks for it (definePlugin refuses it there).
    ...((definition as PluginDefinition).reuseProcess === true ? { reuse: true } : {}),
  };
}

/**
 * The process pool's key for a recipe: its warm spares and kept processes serve only calls of the
 * same key. A process is started with its tool's read-only folders and logs under its name, so
 * both belong in it: keyed by the command (or module) and limits alone, a second command plugin
 * running the same program was handed the first's spare, its own folders missing and the first's
 * open to it.
 */
function recipeKey(parts: string[], readOnlyPaths: readonly string[]): string {
  return [...parts, [...readOnlyPaths].sort().join('\0')].join('\n');
}
