import { maxCpuMsInTree } from '../process-tree.ts';
import type { PluginProcess } from './plugin-process.ts';
import type { ProcessRecipe } from './process-pool.ts';
import type { CallEnding } from './remote-lease.ts';

/** Calls one reused process serves at most: what a plugin leaks per call stays bounded. */
export const MAX_CALLS_PER_PROCESS = 1000;

export interface IdleProcessesOptions {
  /** Processes kept per recipe key; one more is killed. */
  maxPerKey: number;
  /** How long a kept process may wait for its next call before it is killed. */
  idleMs: number;
}

interface Kept {
  proc: PluginProcess;
  /** Whose call it served (ToolCallContext.tenant): it serves no one else's. */
  tenant: string | undefined;
  timer: NodeJS.Timeout;
  offExit: () => void;
  /**
   * After the I/O this turn of the loop has brought: the child printed before it answered, but
   * its stderr may be read after its result. Output read past this point is the next call's.
   */
  settled: Promise<void>;
}

/**
 * Processes of a reusable plugin (ProcessRecipe.reuse) between two of its calls, per recipe key,
 * each for the tenant whose call it served. The most recently used goes first, so under a light
 * load the others age out: a burst's processes are not all kept warm for ever. maxPerKey bounds
 * a plugin's kept processes whatever their tenants, so many clients cannot multiply them. A kept
 * process that dies (an outside kill, the OOM killer) leaves its list at once.
 */
export class IdleProcesses {
  private readonly options: IdleProcessesOptions;
  private readonly byKey = new Map<string, Kept[]>();
  private readonly served = new WeakMap<PluginProcess, number>();

  constructor(options: IdleProcessesOptions) {
    this.options = options;
  }

  /**
   * Keeps a reusable recipe's process for its next call, or says no (the caller kills it): after a
   * result (an aborted call may have left work running) that said how much CPU the process has
   * used, while its RLIMIT_CPU still leaves a call the plugin's whole cpuSeconds; or a process no
   * call ran on. Never past MAX_CALLS_PER_PROCESS calls; past maxPerKey kept, the least recently
   * used goes. `tenant`: whose call the process was taken for; only that tenant's calls get it.
   */
  offer(recipe: Pick<ProcessRecipe, 'key' | 'cpuSeconds' | 'limits'>, proc: PluginProcess, ending: CallEnding, tenant?: string): boolean {
    const calls = (this.served.get(proc) ?? 0) + (ending.kind === 'unused' ? 0 : 1);
    if (calls >= MAX_CALLS_PER_PROCESS) return false;
    if (ending.kind === 'result') {
      const slackMs = recipe.cpuSeconds === null ? Infinity : (recipe.cpuSeconds - recipe.limits.cpuSeconds) * 1000;
      // The child's own word, unless /proc says it used more (a child is not trusted to say).
      const measured = proc.pid === null ? NaN : maxCpuMsInTree(proc.pid);
      if (ending.cpuMs === undefined || Math.max(ending.cpuMs, Number.isNaN(measured) ? 0 : measured) > slackMs) return false;
    } else if (ending.kind !== 'unused') {
      return false;
    }
    this.served.set(proc, calls);
    return this.keep(recipe.key, proc, tenant);
  }

  private keep(key: string, proc: PluginProcess, tenant: string | undefined): boolean {
    const list = this.byKey.get(key) ?? [];
    if (this.options.maxPerKey === 0 || !proc.usable) return false;
    // Full: the least recently used one goes, not this one, which the next call would take first.
    if (list.length >= this.options.maxPerKey) {
      const oldest = list.shift()!;
      this.release(oldest);
      oldest.proc.kill(`more than ${this.options.maxPerKey} kept`);
    }
    const kept: Kept = {
      proc,
      tenant,
      timer: setTimeout(() => {
        this.remove(key, kept);
        proc.kill(`idle for ${this.options.idleMs} ms`);
      }, this.options.idleMs),
      offExit: () => undefined,
      settled: new Promise((resolve) => setImmediate(resolve)),
    };
    // Not what keeps the gateway running: close() kills the kept processes anyway.
    kept.timer.unref();
    kept.offExit = proc.onceExit(() => this.remove(key, kept));
    list.push(kept);
    this.byKey.set(key, list);
    return true;
  }

  /**
   * The most recently kept live process of `key` that served `tenant`, taken out of the list, its
   * last call's output read and its output accounting started afresh for the next
   * (PluginProcess.nextCall); null if none.
   */
  async take(key: string, tenant?: string): Promise<PluginProcess | null> {
    // Looked up afresh after each wait: other calls take and keep processes meanwhile.
    for (let kept = this.lastOf(key, tenant); kept; kept = this.lastOf(key, tenant)) {
      this.remove(key, kept);
      await kept.settled;
      if (!kept.proc.usable) continue;
      kept.proc.nextCall();
      return kept.proc;
    }
    return null;
  }

  private lastOf(key: string, tenant: string | undefined): Kept | undefined {
    const list = this.byKey.get(key) ?? [];
    for (let at = list.length - 1; at >= 0; at--) if (list[at]!.tenant === tenant) return list[at];
    return undefined;
  }

  get size(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }

  /** Forgets every kept process (the pool kills them: they are among its live ones). */
  clear(): void {
    for (const list of this.byKey.values()) for (const kept of list) this.release(kept);
    this.byKey.clear();
  }

  private remove(key: string, kept: Kept): void {
    const list = this.byKey.get(key);
    const at = list?.indexOf(kept) ?? -1;
    if (at < 0) return;
    list!.splice(at, 1);
    this.release(kept);
  }

  private release(kept: Kept): void {
    clearTimeout(kept.timer);
    kept.offExit();
  }
}
