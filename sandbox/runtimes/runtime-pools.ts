import type { HookErrorLog } from './hook-throw.ts';
import { IsolateHosts, type IsolateHostsOptions } from './isolate-hosts.ts';
import type { IsolatedVmSupport } from './isolated-vm-support.ts';
import { nativeTypeScript, sandboxReadPaths } from './node-recipe.ts';
import { ON_LOAD_LIMIT_MS } from './on-load-limit.ts';
import { GATEWAY_ROOT } from './process-launch.ts';
import { ProcessPool, type ProcessPoolOptions } from './process-pool.ts';
import type { ProcessProtections } from './process-sandbox.ts';
import { ThreadPool, type ThreadPoolOptions } from './thread-pool.ts';

/** Sizes and limits per runtime (`thread`: piscina workers; `process`: sandboxed child processes; `isolate`: isolated-vm hosts). */
export interface RuntimePoolsOptions {
  /**
   * How long a plugin's onLoad may take where its calls run, in every runtime (each worker, plugin
   * process or isolate host, and the gateway for `inline` plugins made by toolFromPlugin with these
   * pools). Past it, the calls waiting for it fail with `error: <tool> onLoad did not finish within
   * N ms` (data.code `sandbox_limit_exceeded`). Default 30 000.
   */
  onLoadTimeoutMs?: number;
  /**
   * Each throw of a plugin hook (onLoad, onStart, onPiece, onEnd) in the tools made with these
   * pools, with the plugin, hook, runtime, call id and stack: the call's tool error quotes only the
   * message, so this is where an author finds the file and line (`conveyor serve` logs it at
   * warn). Default: dropped.
   */
  onHookError?: HookErrorLog;
  thread?: ThreadPoolOptions;
  process?: ProcessPoolOptions;
  isolate?: IsolateHostsOptions;
}

/** What each runtime can do on this machine (GET /health). */
export interface RuntimesReport {
  inline: { available: true; boundary: 'none' };
  thread: { available: true; boundary: 'none'; maxThreads: number; maxQueue: number; maxOldGenerationSizeMb: number };
  process: {
    available: true;
    maxProcesses: number;
    maxQueue: number;
    /** How a JS plugin process loads TypeScript: Node's own type stripping, or tsx (Node 20). */
    typescript: 'node' | 'tsx';
    protections: ProcessProtections;
  };
  isolate: {
    available: boolean;
    isolatedVm: string | null;
    /** Why isolates are off here; isolate plugins then run in `process`. */
    reason?: string;
    fallback: 'process' | null;
    maxCalls: number;
    maxQueue: number;
  };
}

/**
 * The gateway's shared runtime pools: one piscina pool, one process pool, one isolate host per
 * plugin package. Created once per gateway and handed to every toolFromPlugin; nothing starts
 * until a call (or report()) needs it.
 *
 * @example
 * const pools = createRuntimePools({ process: { maxProcesses: 8 } });
 * const tool = toolFromPlugin(myPlugin, { moduleUrl: import.meta.url, pools });
 * console.log(await pools.report());
 * await pools.close();
 */
export class RuntimePools {
  readonly thread: ThreadPool;
  readonly process: ProcessPool;
  readonly isolate: IsolateHosts;
  /** See RuntimePoolsOptions.onLoadTimeoutMs. */
  readonly onLoadTimeoutMs: number;
  /** See RuntimePoolsOptions.onHookError. */
  readonly onHookError: HookErrorLog;

  constructor(options: RuntimePoolsOptions = {}) {
    this.onLoadTimeoutMs = options.onLoadTimeoutMs ?? ON_LOAD_LIMIT_MS;
    this.onHookError = options.onHookError ?? (() => undefined);
    if (!(this.onLoadTimeoutMs > 0 && Number.isFinite(this.onLoadTimeoutMs))) throw new RangeError(`onLoadTimeoutMs must be a positive number of ms, got ${this.onLoadTimeoutMs}`);
    this.thread = new ThreadPool(options.thread, this.onLoadTimeoutMs);
    this.process = new ProcessPool(options.process, this.onLoadTimeoutMs);
    this.isolate = new IsolateHosts(this.process, options.isolate);
  }

  /** Probes the process sandbox (≈0.1 s, once) and, where isolated-vm may work, starts an isolate host. */
  async report(): Promise<RuntimesReport> {
    const { protections } = await this.process.ready();
    const isolate: IsolatedVmSupport = await this.isolate.ensure(sandboxReadPaths(GATEWAY_ROOT));
    return {
      inline: { available: true, boundary: 'none' },
      thread: { available: true, boundary: 'none', ...this.thread.options },
      process: {
        available: true,
        maxProcesses: this.process.options.maxProcesses,
        maxQueue: this.process.options.maxQueue,
        typescript: nativeTypeScript() ? 'node' : 'tsx',
        protections,
      },
      isolate: {
        available: isolate.available,
        isolatedVm: isolate.version ?? null,
        ...(isolate.reason ? { reason: isolate.reason } : {}),
        fallback: isolate.available ? null : 'process',
        maxCalls: this.isolate.options.maxCalls,
        maxQueue: this.isolate.options.maxQueue,
      },
    };
  }

  /** Host pids of every live plugin process, spare and isolate host (tests, diagnostics). */
  livePids(): number[] {
    return [...new Set([...this.process.livePids(), ...this.isolate.livePids()])];
  }

  async close(): Promise<void> {
    this.isolate.close();
    await Promise.all([this.thread.close(), this.process.close()]);
  }
}

/** The gateway's runtime pools (see RuntimePools); nothing starts until a call needs it. */
export function createRuntimePools(options: RuntimePoolsOptions = {}): RuntimePools {
  return new RuntimePools(options);
}

/** What each runtime can do here, for GET /health. */
export function runtimesReport(pools: RuntimePools): Promise<RuntimesReport> {
  return pools.report();
}
