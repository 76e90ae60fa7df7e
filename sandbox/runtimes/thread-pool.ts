import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { SandboxError, SandboxQueueFullError } from '../../core/errors.ts';
import type { ToolProgress } from '../../plugins/plugin-types.ts';
import { ON_LOAD_LIMIT_MS } from './on-load-limit.ts';
import { END_OF_PROGRESS, HOOK_BEGUN, type ThreadTask, type ThreadTaskResult } from './thread-worker.ts';
import { progressSchema } from './plugin-protocol.ts';
import { listenForThreadOutput, threadOutputChannelName, type ThreadOutput } from './thread-output.ts';

export interface ThreadPoolOptions {
  /** Worker threads. Default: the machine's cores. */
  maxThreads?: number;
  /** Hook tasks waiting for a worker; one more is refused with a tool error. Default 64. */
  maxQueue?: number;
  /** V8 old-generation limit of each worker (ERR_WORKER_OUT_OF_MEMORY beyond it). Default 256. */
  maxOldGenerationSizeMb?: number;
  /** An idle worker above the minimum exits after this long. Default 30 s. */
  idleTimeoutMs?: number;
  /** Each write a plugin makes to stdout or stderr in a worker (the gateway logs it). Default: dropped. */
  onOutput?: (output: ThreadOutput) => void;
}

/** How long a finished task's progress may trail its result (it normally arrives at once). */
const PROGRESS_GRACE_MS = 1000;
const ENTRY = new URL('./thread-worker-entry.mjs', import.meta.url).href;

/**
 * The gateway's one piscina pool for runtime `thread`: trusted, CPU-bound plugin code off the
 * event loop, killable (an aborted task terminates its worker) and memory-bounded. A worker is
 * not a security boundary: code in it can reach process.getBuiltinModule('fs').
 */
export class ThreadPool {
  readonly options: Required<Omit<ThreadPoolOptions, 'onOutput'>>;
  private pool: Piscina | null = null;
  /** Module URLs every worker imports as it starts. */
  private readonly preload: string[] = [];
  private starting = false;
  private closed = false;
  /** How long a plugin's onLoad may take in a worker (RuntimePoolsOptions.onLoadTimeoutMs). */
  readonly onLoadTimeoutMs: number;

  private readonly outputChannel = threadOutputChannelName();
  private readonly stopListening: () => void;

  constructor(options: ThreadPoolOptions = {}, onLoadTimeoutMs = ON_LOAD_LIMIT_MS) {
    this.onLoadTimeoutMs = onLoadTimeoutMs;
    this.stopListening = listenForThreadOutput(this.outputChannel, options.onOutput ?? (() => undefined));
    this.options = {
      maxThreads: options.maxThreads ?? availableParallelism(),
      maxQueue: options.maxQueue ?? 64,
      maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 256,
      idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    };
  }

  /**
   * Runs one hook task; progress the hook emits goes to `emit` while it runs. `onBegun` is called
   * when a worker has the plugin loaded and starts the hook (after any wait in the queue or for a
   * worker to start).
   */
  async run(task: Omit<ThreadTask, 'port'>, emit: (progress: ToolProgress) => void, signal: AbortSignal, onBegun?: () => void): Promise<ThreadTaskResult> {
    // A call's onAbort task may come after close(): it must not start a fresh pool nobody closes.
    if (this.closed) throw shutDown();
    const pool = this.ensurePool();
    if (pool.queueSize >= this.options.maxQueue) throw this.queueFull(pool);
    const { port1, port2 } = new MessageChannel();
    let drained: () => void = () => undefined;
    const allProgress = new Promise<void>((resolve) => (drained = resolve));
    port1.on('message', (message: unknown) => {
      if (message === END_OF_PROGRESS) drained();
      else if (message === HOOK_BEGUN) onBegun?.();
      // ctx.emit posts whatever the hook passes (a JavaScript plugin has no type check): only a
      // ToolProgress goes on. Anything else, thrown by the gateway's handling of it in this
      // listener, would be an uncaught exception that ends the gateway's process.
      else {
        const progress = progressSchema.safeParse(message);
        if (progress.success) emit(progress.data);
      }
    });
    try {
      const result = (await pool.run({ ...task, port: port2 }, { transferList: [port2], signal })) as ThreadTaskResult;
      // Deliver every progress event of the hook before its result.
      await Promise.race([allProgress, new Promise((resolve) => setTimeout(resolve, PROGRESS_GRACE_MS))]);
      return result;
    } catch (err) {
      if (err instanceof Error && /queue is at limit/i.test(err.message)) throw this.queueFull(pool);
      // close() terminated the worker or dropped the queued task: piscina's "Terminating worker
      // thread" read as the plugin's own failure.
      if (this.closed) throw shutDown();
      throw err;
    } finally {
      port1.close();
    }
  }

  /**
   * Has every worker import `plugin`'s module before its first call. The plugins warmed before the
   * pool starts (all warms in the same turn of the event loop: the gateway's start-up) are loaded
   * by each worker as it starts, so workers that replace ones lost to an abort, a timeout or a
   * crash come warm too; a plugin warmed after that is loaded by one task per worker, best effort.
   * Failures show at the first call.
   */
  warm(plugin?: { module: string; name: string }): void {
    if (plugin && !this.preload.includes(plugin.module)) {
      if (!this.pool) this.preload.push(plugin.module);
      else this.loadOnWorkers(this.pool, plugin);
    }
    if (this.starting || this.pool) return;
    this.starting = true;
    setImmediate(() => {
      if (!this.closed) this.ensurePool();
    });
  }

  private loadOnWorkers(pool: Piscina, plugin: { module: string; name: string }): void {
    for (let i = 0; i < this.options.maxThreads; i++) {
      const { port1, port2 } = new MessageChannel();
      pool
        .run({ module: plugin.module, plugin: plugin.name, hook: 'load', callId: 'warm-up', state: {}, port: port2 }, { transferList: [port2] })
        .catch(() => undefined)
        .finally(() => port1.close());
    }
  }

  get stats(): { threads: number; queued: number } {
    return { threads: this.pool?.threads.length ?? 0, queued: this.pool?.queueSize ?? 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    await pool?.destroy();
    this.stopListening();
  }

  private ensurePool(): Piscina {
    if (this.pool) return this.pool;
    this.pool = new Piscina({
      filename: ENTRY,
      workerData: { preload: this.preload, onLoadTimeoutMs: this.onLoadTimeoutMs, outputChannel: this.outputChannel },
      // A full set of workers at all times: piscina 5 starts replacements for workers it lost (abort,
      // OOM, exit) only up to minThreads, and with fewer workers left, queued tasks were stranded.
      minThreads: this.options.maxThreads,
      maxThreads: this.options.maxThreads,
      maxQueue: this.options.maxQueue,
      idleTimeout: this.options.idleTimeoutMs,
      // Hooks may start async work (a pre-connect) that must progress between tasks; the default
      // Atomics.wait between tasks would freeze the worker's event loop.
      atomics: 'disabled',
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxOldGenerationSizeMb },
    });
    // piscina emits 'error' for what belongs to no task: a worker's answer that arrives after its
    // task was aborted (the worker is being terminated; the call has ended already), a worker that
    // dies between tasks. Unheard, an EventEmitter 'error' is an uncaught exception: the gateway
    // would go down for a call that is already over. The task's own outcome reaches its caller.
    this.pool.on('error', () => undefined);
    return this.pool;
  }

  private queueFull(pool: Piscina): SandboxQueueFullError {
    // Worded as the process and python runtimes word theirs; the queue fills only once every thread is busy.
    return new SandboxQueueFullError('thread', `the thread runtime is busy: ${pool.threads.length} running and ${pool.queueSize} queued`);
  }
}

function shutDown(): SandboxError {
  return new SandboxError('the thread runtime is shut down');
}
