import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxMode } from '../python-launch.ts';
import { descendantPids } from '../process-tree.ts';
import { makeStagingDir } from '../stale-staging.ts';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { SandboxError, SandboxQueueFullError } from '../../core/errors.ts';
import { eitherSignal, untilAborted } from './linked-abort.ts';
import { ON_LOAD_LIMIT_MS, START_ALLOWANCE_MS } from './on-load-limit.ts';
import { PluginProcess } from './plugin-process.ts';
import { planProcessLaunch, type ProcessLimits, type SandboxSetup } from './process-launch.ts';
import { detectProcessSandbox, type ProcessProtections } from './process-sandbox.ts';
import { claimUid, killUid, pidsOfUids, releaseUid } from './uid-processes.ts';

export interface ProcessPoolOptions {
  /** 'auto' tries bwrap, then a network+PID namespace (unshare), then none. Default: $CONVEYOR_SANDBOX, else 'auto'. */
  sandbox?: 'auto' | SandboxMode;
  /** Calls running at once (one process each). Default 8. */
  maxProcesses?: number;
  /** Calls waiting for a process; one more gets a tool error at once. Default 32. */
  maxQueue?: number;
  /** Warm processes kept ready per plugin, so a call does not wait for Node to start. Default 1. */
  sparesPerPlugin?: number;
  /** Warm processes kept ready in all. Default 4. */
  maxSpares?: number;
  /** As root, process n runs as uid uidBase+n (n ≥ 1; uidBase itself for probes and hosts). Default 1_900_000_000. */
  uidBase?: number;
  /** Time to say `ready`: Node's start, the import and a JS plugin's onLoad. Default 30 s + the onLoad limit (on-load-limit.ts). */
  startupTimeoutMs?: number;
  /**
   * What a plugin process prints (console.log/error, a stack trace): the sandbox gives a plugin no
   * other way out, so this is how its author debugs it (`conveyor serve` logs it). Default: dropped.
   */
  onOutput?: (output: { plugin: string; text: string }) => void;
}

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
}

export interface ProcessLease {
  readonly proc: PluginProcess;
  /** Kills the process (one call per process) and frees its slot; idempotent. */
  done(reason: string): void;
}

const UID_RANGE = 4096;

/**
 * The shared pool of runtime `process`: at most maxProcesses calls at once, each in a fresh
 * sandboxed process that is killed when its call ends; a bounded queue in front; a few warm
 * spares per plugin so call start does not pay for Node's startup.
 */
export class ProcessPool {
  readonly options: Required<ProcessPoolOptions>;
  private readonly slots: BoundedQueue;
  private detection: Promise<{ setup: SandboxSetup; protections: ProcessProtections }> | null = null;
  /** Warm processes per recipe key, started or still starting (null: the start failed). */
  private readonly spares = new Map<string, Array<Promise<PluginProcess | null>>>();
  private readonly live = new Set<PluginProcess>();
  /** spawn()s in progress: close() waits for each (a child still starting is killed, then gone). */
  private readonly starting = new Set<Promise<unknown>>();
  private readonly closing = new AbortController();
  private readonly usedUids = new Set<number>();
  private stagingRoot: string | null = null;
  private closed = false;
  /** How long a plugin's onLoad may take in a plugin process or isolate host (RuntimePoolsOptions.onLoadTimeoutMs). */
  readonly onLoadTimeoutMs: number;

  constructor(options: ProcessPoolOptions = {}, onLoadTimeoutMs = ON_LOAD_LIMIT_MS) {
    this.onLoadTimeoutMs = onLoadTimeoutMs;
    this.options = {
      sandbox: options.sandbox ?? sandboxFromEnv(),
      maxProcesses: options.maxProcesses ?? 8,
      maxQueue: options.maxQueue ?? 32,
      sparesPerPlugin: options.sparesPerPlugin ?? 1,
      maxSpares: options.maxSpares ?? 4,
      uidBase: options.uidBase ?? 1_900_000_000,
      startupTimeoutMs: options.startupTimeoutMs ?? START_ALLOWANCE_MS + onLoadTimeoutMs,
      onOutput: options.onOutput ?? (() => undefined),
    };
    this.slots = new BoundedQueue(this.options.maxProcesses, this.options.maxQueue, SandboxQueueFullError.refusal('process'));
  }

  /** Probes the sandbox once (≈0.1 s) and reports what holds. */
  ready(): Promise<{ setup: SandboxSetup; protections: ProcessProtections }> {
    this.detection ??= detectProcessSandbox({ mode: this.options.sandbox, probeUid: this.options.uidBase, uidDrop: true });
    return this.detection;
  }

  /**
   * Waits for a slot (bounded queue), then hands out a warm spare or a freshly started process.
   * `signal` (the call's) aborting while the process starts frees the slot at once: a cold start
   * is killed, a spare still coming up goes back to its list.
   */
  async acquire(recipe: ProcessRecipe, signal: AbortSignal): Promise<ProcessLease> {
    if (this.closed) throw shutDown();
    const release = await this.slots.acquire(signal);
    let proc: PluginProcess;
    try {
      proc = (await this.takeSpare(recipe.key, signal)) ?? (await this.spawn(recipe, signal));
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
    let finished = false;
    return {
      proc,
      done: (reason) => {
        if (finished) return;
        finished = true;
        proc.kill(reason);
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
    const spare: Promise<PluginProcess | null> = this.spawn(recipe).then(
      (proc) => {
        proc.onceExit(() => this.forget(recipe.key, spare));
        return proc;
      },
      () => {
        this.forget(recipe.key, spare);
        return null;
      },
    );
    list.push(spare);
    this.spares.set(recipe.key, list);
  }

  /** Takes a spare out of its list (no-op once a call has taken it). */
  private forget(key: string, spare: Promise<PluginProcess | null>): void {
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
    const uid = setup.uidDrop ? this.allocateUid() : null;
    let hostCwd: string | null = null;
    let cleaned = false;
    const cleanup = (): void => {
      // Once: a second releaseUid could drop a lock another gateway has claimed since.
      if (cleaned) return;
      cleaned = true;
      if (uid !== null) {
        killUid(uid);
        this.usedUids.delete(uid);
        releaseUid(uid);
      }
      if (hostCwd !== null) rmSync(hostCwd, { recursive: true, force: true });
    };
    try {
      // Inside the try: a claimed uid that a failed mkdtemp or chown left held was never given
      // back, and each such failure took one more of the range until no process could start.
      // Made again when a tmp cleaner removed it under a long-running gateway: else every later
      // start would fail until a restart.
      if (this.stagingRoot === null || !existsSync(this.stagingRoot)) this.stagingRoot = makeStagingRoot();
      hostCwd = mkdtempSync(join(this.stagingRoot, 'p-'));
      chmodSync(hostCwd, 0o700);
      if (uid !== null) chownSync(hostCwd, uid, uid);
      const plan = planProcessLaunch(setup, { ...recipe, uid, hostCwd });
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
        cleanup();
      });
      if (this.closed) {
        // close() came after `ready` but before the process was in `live`, where it kills them.
        proc.kill('the process runtime is shut down');
        await new Promise((resolve) => proc.onceExit(resolve));
        throw shutDown();
      }
      return proc;
    } catch (err) {
      cleanup();
      throw err;
    }
  }

  /** Host pids of every live plugin process and its descendants (tests, diagnostics). */
  livePids(): number[] {
    const pids: number[] = [];
    for (const proc of this.live) {
      if (proc.pid !== null) pids.push(proc.pid, ...descendantPids(proc.pid));
    }
    pids.push(...pidsOfUids(this.usedUids));
    return [...new Set(pids)];
  }

  get stats(): { running: number; queued: number; spares: number } {
    return { running: this.slots.active, queued: this.slots.waiting, spares: [...this.spares.values()].reduce((n, l) => n + l.length, 0) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.spares.clear();
    // Children still starting (a call's cold start, a spare, an isolate host) are killed now rather
    // than awaited: a start-up may take up to startupTimeoutMs, and one that came up after close
    // would be handed a call and outlive the pool.
    this.closing.abort('the process runtime is shut down');
    const exits = [...this.live].map((proc) => new Promise<void>((resolve) => proc.onceExit(() => resolve())));
    for (const proc of this.live) proc.kill('the gateway is shutting down');
    await Promise.all([...exits, ...this.starting]);
    if (this.stagingRoot) rmSync(this.stagingRoot, { recursive: true, force: true });
  }

  /**
   * The oldest spare for this key (waiting for it if it is still starting: sooner than a new one).
   * A call aborted meanwhile stops waiting, and the spare goes back to the front of its list.
   */
  private async takeSpare(key: string, signal: AbortSignal): Promise<PluginProcess | null> {
    const list = this.spares.get(key);
    while (list && list.length > 0) {
      const spare = list.shift() as Promise<PluginProcess | null>;
      const proc = await untilAborted(spare, signal).catch((err: unknown) => {
        if (!this.closed && this.spares.get(key) === list) list.unshift(spare);
        throw err;
      });
      if (proc?.alive) return proc;
    }
    return null;
  }

  private allocateUid(): number {
    const uid = claimUid(this.options.uidBase, UID_RANGE);
    this.usedUids.add(uid);
    return uid;
  }
}

const STAGING_PREFIX = 'conveyor-plugins-';

function shutDown(): SandboxError {
  return new SandboxError('the process runtime is shut down');
}

function makeStagingRoot(): string {
  const root = makeStagingDir(STAGING_PREFIX);
  // Traversable, not listable: each process finds only its own directory.
  chmodSync(root, 0o711);
  mkdirSync(root, { recursive: true });
  return root;
}

function sandboxFromEnv(): 'auto' | SandboxMode {
  const value = process.env['CONVEYOR_SANDBOX'];
  return value === 'bwrap' || value === 'netns' || value === 'none' ? value : 'auto';
}
