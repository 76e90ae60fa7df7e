import type { SimHandle, SimOptions } from '../sim/sim-server.ts';
import { startSimThread } from '../sim/sim-thread.ts';
import { checkBuiltinDataFiles } from '../plugins/builtin-data-files.ts';
import { createBuiltinTools } from '../plugins/builtin-tools.ts';
import { builtinPluginsConfigSchema, type BuiltinPluginsConfigInput } from '../plugins/builtin-plugins-config.ts';
import { startPythonSandbox, type PythonSandboxOptions } from '../sandbox/python-sandbox.ts';
import { createRuntimePools, type RuntimePools, type RuntimePoolsOptions, type RuntimesReport } from '../sandbox/runtimes/runtime-pools.ts';
import type { ToolPlugin } from '../plugins/plugin-types.ts';
import type { Logger } from './access-log.ts';
import type { GatewayConfigInput } from './config.ts';
import { parseGatewayConfig, startGateway, type GatewayHandle } from './server.ts';
import { modulePath, toolsFromModules, type ToolModuleSpec } from './tool-modules.ts';
import { hookErrorLog } from './hook-error-log.ts';

export interface ConveyorOptions {
  gateway?: Omit<Partial<GatewayConfigInput>, 'upstream'> & { upstream?: Partial<GatewayConfigInput['upstream']> };
  /** Options for the embedded simulator, used when no upstream baseUrl is given. */
  sim?: SimOptions;
  sandbox?: PythonSandboxOptions;
  /** Which built-in tools run in the gateway, and their settings (all on by default). */
  plugins?: BuiltinPluginsConfigInput;
  /** Sizes of the shared plugin runtime pools (thread, process, isolate). */
  runtimes?: RuntimePoolsOptions;
  /** More tools to register beside the built-ins (same name = replaces the built-in). */
  tools?: readonly ToolPlugin[];
  /**
   * Plugin modules to run as tools, like `tools` (`conveyor serve --tool`): paths relative to the
   * working directory, or `file:` URLs, each default-exporting a `definePlugin(...)`; or
   * `{ module, readOnlyPaths }` for a sandboxed one that reads files outside the repository.
   */
  toolModules?: ReadonlyArray<string | ToolModuleSpec>;
  /** How long each of `toolModules` may take to import (its top-level await included) before the start fails; 30 000 by default. */
  toolModuleLoadMs?: number;
  /** Wraps every tool before the gateway gets it (benchmarks add a tool timing profile; logging, tracing). */
  decorateTool?: (tool: ToolPlugin) => ToolPlugin;
  /** The gateway's access lines and unexpected errors (pino); none given, nothing is logged. */
  logger?: Logger;
}

export interface ConveyorHandle {
  gateway: GatewayHandle;
  /** Present when the gateway runs on its embedded simulator. */
  sim?: SimHandle;
  /** The Python sandbox; absent when the `python` tool is off (`plugins.python: false`): nothing else runs in it. */
  sandbox?: Awaited<ReturnType<typeof startPythonSandbox>>;
  pools: RuntimePools;
  /** What each plugin runtime can do here (probed once at start). */
  runtimes: RuntimesReport;
  /** Built-in tools a tool module replaced under their own name, with the module each came from (the start-up banner says so). */
  replacedBuiltins: ReadonlyMap<string, string>;
  /** Closes the gateway (letting requests in flight finish for up to `graceMs`, see GatewayHandle.close), then the rest. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Wires the whole product: the Python sandbox and the shared plugin runtime pools → the built-in
 * tools → the gateway, in front of a real upstream or the embedded simulator on loopback. Used by
 * `npm start`, the end-to-end tests and the benchmarks.
 */
export async function startConveyor(options: ConveyorOptions = {}): Promise<ConveyorHandle> {
  const upstreamUrl = options.gateway?.upstream?.baseUrl;
  // Checked before anything starts: a mistake in the settings should not wait for the simulator
  // and the sandbox (nor leave them to be closed). The simulator's URL is known only once it
  // listens; any loopback URL stands in for it here.
  parseGatewayConfig(gatewayInput(options.gateway, upstreamUrl ?? 'http://127.0.0.1/v1'));
  // A sandboxed plugin's console output is its author's one way to see inside it.
  const onOutput = ({ plugin, text }: { plugin: string; text: string }): void => options.logger?.info({ plugin, output: text.trimEnd() }, 'plugin output');
  // A spare that failed to start is no call's failure (the next call starts a process of its own):
  // without this line a plugin that fails at start-up only now and then left no trace.
  const onSpareFailure = ({ plugin, reason }: { plugin: string; reason: string }): void => options.logger?.warn({ plugin, reason }, 'warm spare plugin process did not start');
  const onHookError = hookErrorLog(options.logger);
  const pools = createRuntimePools({ onHookError, ...options.runtimes, process: { onOutput, onSpareFailure, ...options.runtimes?.process }, thread: { onOutput, ...options.runtimes?.thread } });
  let sim: SimHandle | undefined;
  let sandbox: ConveyorHandle['sandbox'] | undefined;
  try {
    // First: a tool author's mistake in a module should not wait for the simulator and the sandbox.
    const moduleTools = await toolsFromModules(options.toolModules ?? [], pools, { loadTimeoutMs: options.toolModuleLoadMs });
    // Checked here as well as in createBuiltinTools: without the python tool no interpreter is
    // needed, so a machine without one (or without a working sandbox) still serves the rest; and
    // a data file a setting names that is not there stops the start before anything is started.
    const plugins = builtinPluginsConfigSchema.parse(options.plugins ?? {});
    checkBuiltinDataFiles(plugins);
    // On a thread of its own: its work (tokenising a prompt of megabytes) must not hold the gateway's.
    sim = upstreamUrl ? undefined : await startSimThread(options.sim);
    if (plugins.python) sandbox = await startPythonSandbox(options.sandbox);
    const builtins = await createBuiltinTools({ config: plugins, pools, sandbox });
    const tools = builtins.tools;
    // /health's `plugins`: every tool that runs, a built-in a module or the caller replaced under its own name.
    const described: Record<string, Record<string, unknown>> = { ...builtins.describe };
    for (const tool of options.tools ?? []) described[tool.name] = { runtime: 'given to startConveyor' };
    const replacedBuiltins = new Map<string, string>();
    moduleTools.forEach((tool, i) => {
      const module = modulePath(options.toolModules![i]!);
      if (tools.has(tool.name)) {
        replacedBuiltins.set(tool.name, module);
        // Said at warn too: a supervisor's log may be all that is read, and a module may take a built-in's name by accident.
        options.logger?.warn({ tool: tool.name, module }, `tool module ${module} replaces the built-in tool ${tool.name}`);
      }
      described[tool.name] = { runtime: tool.runtime, module };
    });
    for (const tool of [...(options.tools ?? []), ...moduleTools]) tools.set(tool.name, tool);
    if (options.decorateTool) for (const [name, tool] of tools) tools.set(name, options.decorateTool(tool));
    const runtimes = await pools.report();
    // Where isolated-vm is unavailable, isolate plugins run in the process runtime: say where they do run, as their results do.
    if (!runtimes.isolate.available) {
      for (const [name, facts] of Object.entries(described)) {
        if (facts.runtime === 'isolate') described[name] = { ...facts, runtime: 'process', requestedRuntime: 'isolate', fallbackReason: runtimes.isolate.reason };
      }
    }
    const started = sandbox;
    const protections = started?.protections() ?? { mode: 'off', reason: 'the python tool is disabled (plugins.python: false)' };
    const health = () => ({
      sandbox: started ? { ...protections, cells: started.cellLoad() } : protections,
      runtimes,
      plugins: described,
      ...(sim ? { simulator: sim.counters() } : {}),
    });
    let closing: Promise<void> | undefined;
    const gateway = await startGateway(
      gatewayInput(options.gateway, upstreamUrl ?? sim!.url),
      { tools, logger: options.logger, health, ...(started ? { pythonCells: () => started.cellLoad() } : {}) },
    );
    return {
      gateway,
      sim,
      sandbox,
      pools,
      runtimes,
      replacedBuiltins,
      close: (closeOptions) => {
        // A second call ends the gateway's grace period; the rest closes once.
        const gatewayClosed = gateway.close(closeOptions);
        closing ??= gatewayClosed.then(async () => void (await Promise.allSettled([started?.close(), pools.close(), sim?.close()])));
        return closing;
      },
    };
  } catch (err) {
    await Promise.allSettled([sandbox?.close(), pools.close(), sim?.close()]);
    throw err;
  }
}

function gatewayInput(gateway: ConveyorOptions['gateway'], baseUrl: GatewayConfigInput['upstream']['baseUrl']): GatewayConfigInput {
  return { ...gateway, upstream: { ...gateway?.upstream, baseUrl } };
}
