import { setMaxListeners } from 'node:events';
import type { ProcessPoolOptions } from './process-pool-options.ts';
import { descendantPids, untilStopped } from '../process-tree.ts';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { SandboxError, SandboxQueueFullError } from '../../core/errors.ts';
import { IdleProcesses } from './idle-processes.ts';
import { eitherSignal, untilAborted } from './linked-abort.ts';
import { ON_LOAD_LIMIT_MS, START_ALLOWANCE_MS } from './on-load-limit.ts';
import { PluginProcess } from './plugin-process.ts';
import { NoReadyMessageError, ReadyDeadline } from './process-start-failure.ts';
import { planProcessLaunch, type ProcessLimits, type SandboxSetup } from './process-launch.ts';
import { detectProcessSandbox, type ProcessProtections } from './process-sandbox.ts';
import type { CallEnding } from './remote-lease.ts';
import { ProcessStaging } from './process-staging.ts';
import { sandboxModeFromEnv } from '../sandbox-mode-env.ts';

export type { ProcessPoolOptions };

/** What to spawn for one plugin (one key = interchangeable processes). */
export interface ProcessRecipe {
  key: string;
  /** Who the process is for, in words (the plugin's name): onOutput says it. */
  label?: string;
  argv: string[];
  readOnlyPaths: string[];
  limits: ProcessLimits;
  dataMb: number;
  cpuSeconds: number | null;
  extraEnv?: Record<string, string>;
  /**
   * A process that answered its call serves later calls of the same key (PluginDefinition.reuseProcess),
   * while its CPU limit (cpuSeconds) leaves each call limits.cpuSeconds.
   */
  reuse?: boolean;
}

/**
 * A warm process, started or still starting: `started` settles with the process or with why its
 * start failed; `stop` ends a start-up that a waiting call gives up on.
 */
interface Spare {
  readonly started: Promise<PluginProcess | Error>;
  readonly stop: AbortController;
}

export interface ProcessLease {
  readonly proc: PluginProcess;
  /** Kills the process, or keeps it for the next call (a reusable recipe's, after a result), and frees its slot; idempotent. */
  done(reason: string, ending?: CallEnding): void;
}

/** How long close() waits, at most, for its killed processes' descendants to be torn down. */
const CLOSE_STOP_WAIT_MS = 2_000;

/**
 * The shared pool of runtime `process`: at most maxProcesses calls at once, each in a fresh
 * sandboxed process that is killed when its call ends; a bounded queue in front; a few warm
 * spares per plugin so call start does not pay for Node's startup.
 */
export class ProcessPool {
  readonly options: Required<ProcessPoolOptions>;
  private readonly slots: BoundedQueue;
  private detection: Promise<{ setup: SandboxSetup; protections: ProcessProtections }> | null = null;
  /** Warm processes per recipe key, started or still starting. */
  private readonly spares = new Map<string, Spare[]>();
  private readonly live = new Set<PluginProcess>();
  /** Reusable recipes' processes between calls. */
  private readonly idle: IdleProcesses;
  /** spawn()s in progress: close() waits for each (a child still starting is killed, then gone). */
  private readonly starting = new Set<Promise<unknown>>();
  private readonly closing = new AbortController();
  private readonly staging: ProcessStaging;
  private closed = false;
  /** How long a plugin's onLoad may take in a plugin process or isolate host (RuntimePoolsOptions.onLoadTimeoutMs). */
  readonly onLoadTimeoutMs: number;

  constructor(options: ProcessPoolOptions = {}, onLoadTimeoutMs = ON_LOAD_LIMIT_MS) {
    // Every start in progress listens to it (calls, spares, hosts): more than ten at once is load, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.onLoadTimeoutMs = onLoadTimeoutMs;
    this.options = {
      sandbox: options.sandbox ?? sandboxModeFromEnv(),
      maxProcesses: options.maxProcesses ?? 8,
      maxQueue: options.maxQueue ?? 32,
      sparesPerPlugin: options.sparesPerPlugin ?? 1,
      maxSpares: options.maxSpares ?? 4,
      maxIdlePerPlugin: options.maxIdlePerPlugin ?? 4,
      idleMs: options.idleMs ?? 30_000,
      uidBase: options.uidBase ?? 1_900_000_000,
      startupTimeoutMs: options.startupTimeoutMs ?? START_ALLOWANCE_MS + onLoadTimeoutMs,
      onOutput: options.onOutput ?? (() => undefined),
      onSpareFailure: options.onSpareFailure ?? (() => undefined),
    };
    this.staging = new ProcessStaging(this.options.uidBase);
    this.idle = new IdleProcesses({ maxPerKey: this.options.maxIdlePerPlugin, idleMs: this.options.idleMs });
    this.slots = new BoundedQueue(this.options.maxProcesses, this.options.maxQueue, SandboxQueueFullError.refusal('process'));
  }

  /** Probes the sandbox once (≈0.1 s) and reports what holds. */
  ready(): Promise<{ setup: SandboxSetup; protections: ProcessProtections }> {
    this.detection ??= detectProcessSandbox({ mode: this.options.sandbox, probeUid: this.options.uidBase, uidDrop: true });
    return this.detection;
  }

  /**
   * Waits for a slot (bounded queue), then hands out a kept process (a reusable recipe's), a warm
   * spare or a freshly started process.
   * `signal` (the call's) aborting while the process starts frees the slot at once: a cold start
   * is killed, a spare still coming up goes back to its list. `tenant` (ToolCallContext.tenant):
   * a kept process is handed out only to calls of the tenant whose call it served.
   */
  async acquire(recipe: ProcessRecipe, signal: AbortSignal, tenant?: string): Promise<ProcessLease> {
    if (this.closed) throw shutDown();
    const release = await this.slots.acquire(signal);
    let proc: PluginProcess;
    try {
      proc = (recipe.reuse ? await this.idle.take(recipe.key, tenant) : null) ?? (await this.takeSpare(recipe.key, signal)) ?? (await this.spawn(recipe, signal));
      if (this.closed) {
        // close() came while this call waited for its process: it is not handed out.
        proc.kill('the process runtime is shut down');
        throw shutDown();
      }
    } catch (err) {
      release();
      throw err;
    }
    this.warm(recipe);
    proc.oneCallAtATime();
    let finished = false;
    return {
      proc,
      done: (reason, ending) => {
        if (finished) return;
        finished = true;
        if (!(recipe.reuse && !this.closed && ending && this.idle.offer(recipe, proc, ending, tenant))) proc.kill(reason);
        release();
      },
    };
  }

  /** Keeps up to sparesPerPlugin warm processes for this recipe (never more than maxSpares in all). */
  warm(recipe: ProcessRecipe): void {
    const list = this.spares.get(recipe.key) ?? [];
    const total = [...this.spares.values()].reduce((n, l) => n + l.length, 0);
    if (this.closed || list.length >= this.options.sparesPerPlugin || total >= this.options.maxSpares) return;
    // A spare that dies while it waits (a crash, an outside kill) or never starts gives its place
    // up: left in the list it counted against sparesPerPlugin and maxSpares, and no live spare
    // took its place until a call for its plugin drew it out.
    const stop = new AbortController();
    const spare: Spare = {
      stop,
      started: this.spawn(recipe, stop.signal).then(
        (proc) => {
          proc.onceExit(() => this.forget(recipe.key, spare));
          return proc;
        },
        (err: unknown) => {
          this.forget(recipe.key, spare);
          this.reportSpareFailure(recipe, err);
          return err instanceof Error ? err : new SandboxError(String(err));
        },
      ),
    };
    list.push(spare);
    this.spares.set(recipe.key, list);
  }

  /**
   * Says why a spare did not start (onSpareFailure): before, nothing did, and a plugin whose every
   * start failed showed it only in its calls' errors. Never throws: a spare's failure is not one.
   */
  private reportSpareFailure(recipe: ProcessRecipe, err: unknown): void {
    if (this.closed) return;
    try {
      this.options.onSpareFailure({ plugin: recipe.label ?? 'plugin', reason: err instanceof Error ? err.message : String(err) });
    } catch {
      // the log's own failure: the spare is already given up, and the next call starts its own
    }
  }

  /** Takes a spare out of its list (no-op once a call has taken it). */
  private forget(key: string, spare: Spare): void {
    const list = this.spares.get(key);
    const at = list?.indexOf(spare) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }

  /**
   * Starts one sandboxed process (not counted against the call slots: used for spares and hosts
   * too). After close(), and for a start-up close() interrupts, it fails with a SandboxError; so
   * does one that `signal` aborts (the process is killed).
   */
  spawn(recipe: ProcessRecipe, signal?: AbortSignal): Promise<PluginProcess> {
    if (this.closed) return Promise.reject(shutDown());
    const started = this.start(recipe, signal);
    const tracked = started.catch(() => undefined);
    this.starting.add(tracked);
    void tracked.then(() => this.starting.delete(tracked));
    return started;
  }

  private async start(recipe: ProcessRecipe, signal?: AbortSignal): Promise<PluginProcess> {
    const { setup } = await this.ready();
    if (this.closed) throw shutDown();
    const place = this.staging.claim(setup.uidDrop);
    try {
      const plan = planProcessLaunch(setup, { ...recipe, uid: place.uid, hostCwd: place.hostCwd });
      const plugin = recipe.label ?? 'plugin';
      const stop = signal ? eitherSignal(this.closing.signal, signal) : { signal: this.closing.signal, unlink: () => undefined };
      const proc = await PluginProcess.start(plan, {
        startupTimeoutMs: this.options.startupTimeoutMs,
        outputBytes: recipe.limits.outputBytes,
        onOutput: (text) => this.options.onOutput({ plugin, text }),
        signal: stop.signal,
      })
        .catch((err: unknown) => {
          throw this.closed ? shutDown() : err;
        })
        .finally(stop.unlink);
      this.live.add(proc);
      proc.onceExit(() => {
        this.live.delete(proc);
        place.release();
      });
      if (this.closed) {
        // close() came after `ready` but before the process was in `live`, where it kills them.
        proc.kill('the process runtime is shut down');
        await new Promise((resolve) => proc.onceExit(resolve));
        throw shutDown();
      }
      return proc;
    } catch (err) {
      place.release();
      throw err;
    }
  }

  /** Host pids of every live plugin process and its descendants (tests, diagnostics). */
  livePids(): number[] {
    const pids: number[] = [];
    for (const proc of this.live) {
      if (proc.pid !== null) pids.push(proc.pid, ...descendantPids(proc.pid));
    }
    pids.push(...this.staging.pids());
    return [...new Set(pids)];
  }

  /** `idle`: reusable plugins' processes kept between calls. */
  get stats(): { running: number; queued: number; spares: number; idle: number } {
    return { running: this.slots.active, queued: this.slots.waiting, spares: [...this.spares.values()].reduce((n, l) => n + l.length, 0), idle: this.idle.size };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.spares.clear();
    this.idle.clear();
    // Children still starting (a call's cold start, a spare, an isolate host) are killed now rather
    // than awaited: a start-up may take up to startupTimeoutMs, and one that came up after close
    // would be handed a call and outlive the pool.
    this.closing.abort('the process runtime is shut down');
    const exits = [...this.live].map((proc) => new Promise<void>((resolve) => proc.onceExit(() => resolve())));
    const pids = this.livePids();
    for (const proc of this.live) proc.kill('the gateway is shutting down');
    await Promise.all([...exits, ...this.starting]);
    // A plugin's exit is its top process's: the killed ones under it may still be tearing down.
    await untilStopped(pids, CLOSE_STOP_WAIT_MS);
    this.staging.remove();
  }

  /**
   * The oldest spare for this key (waiting for it if it is still starting: sooner than a new one).
   * A call aborted meanwhile stops waiting, and the spare goes back to the front of its list.
   * A spare that never said `ready` fails the call that waited for it, with its last line: a
   * fresh start of the same program would have made the call wait a second startupTimeoutMs for
   * the same silence. Likewise a call whose start limit runs out while it waits: the spare's
   * start-up is then the call's, and ends with its words (ReadyDeadline).
   */
  private async takeSpare(key: string, signal: AbortSignal): Promise<PluginProcess | null> {
    const list = this.spares.get(key);
    while (list && list.length > 0) {
      const spare = list.shift() as Spare;
      const outcome = await untilAborted(spare.started, signal).catch(async (err: unknown) => {
        if (!(err instanceof ReadyDeadline)) {
          if (!this.closed && this.spares.get(key) === list) list.unshift(spare);
          throw err;
        }
        spare.stop.abort(err);
        const late = await spare.started;
        // Ready just before the stop landed: it is not the call's any more, and serves the next.
        if (late instanceof PluginProcess && late.usable && !this.closed && this.spares.get(key) === list) list.unshift(spare);
        throw late instanceof NoReadyMessageError ? late : err;
      });
      if (outcome instanceof NoReadyMessageError) throw outcome;
      if (outcome instanceof PluginProcess && outcome.usable) return outcome;
    }
    return null;
  }
}

function shutDown(): SandboxError {
  return new SandboxError('the process runtime is shut down');
}

