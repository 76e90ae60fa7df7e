import { SandboxError, SandboxQueueFullError } from '../../core/errors.ts';
import { BoundedQueue } from '../../core/bounded-queue.ts';
import { checkIsolatedVm, type IsolatedVmSupport } from './isolated-vm-support.ts';
import { PLUGIN_HOST_ISOLATES, pluginHostArgv } from './node-recipe.ts';
import type { PluginProcess } from './plugin-process.ts';
import { DEFAULT_PROCESS_LIMITS, v8CodeRangeMb } from './process-launch.ts';
import type { ProcessPool, ProcessRecipe } from './process-pool.ts';
import type { RemoteLease } from './remote-lease.ts';

export interface IsolateHostsOptions {
  /** Calls one host serves at once. Default 32. */
  maxCalls?: number;
  /** Calls waiting for the host; one more gets a tool error at once. Default 64. */
  maxQueue?: number;
  /** The host's own JS heap (plugin hooks). Default 512. */
  heapMb?: number;
  /**
   * RLIMIT_DATA of the host: its heap plus every live isolate's. Default 4096, plus V8's code range
   * for the host's own isolates and each call's (`v8CodeRangeMb`: 510 MiB each on Node 24, else 0).
   */
  dataMb?: number;
}

interface HostGroup {
  host: PluginProcess | null;
  starting: Promise<PluginProcess> | null;
  slots: BoundedQueue;
  /** Set once a host failed to load isolated-vm: isolates are off for this group. */
  unavailable: string | null;
}

/** Time a host gets to answer a ping after a call on it timed out, before it counts as wedged. */
const PING_MS = 2000;

/**
 * Runtime `isolate`: one long-lived sandboxed Node process (started with --no-node-snapshot) per
 * plugin package, serving many calls at once. Plugin hooks (trusted) run in it; each
 * ctx.guest.run gets a fresh isolated-vm isolate. A V8 OOM that isolated-vm cannot contain ends
 * this host only (and the calls on it), never the gateway: that is why it is a separate process.
 */
export class IsolateHosts {
  private readonly processes: ProcessPool;
  readonly options: Required<IsolateHostsOptions>;
  private readonly groups = new Map<string, HostGroup>();
  private readonly checked: IsolatedVmSupport = checkIsolatedVm();
  private lastHostError: string | null = null;

  constructor(processes: ProcessPool, options: IsolateHostsOptions = {}) {
    this.processes = processes;
    const maxCalls = options.maxCalls ?? 32;
    this.options = {
      maxCalls,
      maxQueue: options.maxQueue ?? 64,
      heapMb: options.heapMb ?? 512,
      dataMb: options.dataMb ?? 4096 + (maxCalls + PLUGIN_HOST_ISOLATES) * v8CodeRangeMb(),
    };
  }

  /** Static checks, plus the last host start failure if one happened. */
  support(): IsolatedVmSupport {
    if (!this.checked.available) return this.checked;
    return this.lastHostError ? { ...this.checked, available: false, reason: this.lastHostError } : this.checked;
  }

  /** Starts (or reuses) the host for these read paths and tells whether isolates really work in it. */
  async ensure(readOnlyPaths: string[]): Promise<IsolatedVmSupport> {
    if (!this.checked.available) return this.checked;
    const group = this.group(readOnlyPaths);
    if (group.unavailable) return { ...this.checked, available: false, reason: group.unavailable };
    try {
      await this.host(group, readOnlyPaths);
      return this.checked;
    } catch (err) {
      return { ...this.checked, available: false, reason: err instanceof Error ? err.message : String(err) };
    }
  }

  async acquire(readOnlyPaths: string[], signal: AbortSignal): Promise<RemoteLease> {
    const group = this.group(readOnlyPaths);
    const release = await group.slots.acquire(signal);
    let host: PluginProcess;
    try {
      host = await this.host(group, readOnlyPaths);
    } catch (err) {
      release();
      throw err;
    }
    return {
      proc: host,
      done: (_reason, ending) => {
        release();
        if (ending.kind === 'unanswered' && host.alive) this.checkResponsive(host);
        // The host outlives every call: counted over its life, the output limit would end it (and
        // every call on it) once its hooks' prints had added up, however small each one was.
        // Idle, nothing it printed belongs to a call still running, so the count starts afresh.
        else if (group.slots.active === 0 && group.host === host && host.usable) host.nextCall();
      },
    };
  }

  livePids(): number[] {
    return [...this.groups.values()].flatMap((g) => (g.host?.alive && g.host.pid !== null ? [g.host.pid] : []));
  }

  close(): void {
    for (const group of this.groups.values()) group.host?.kill('the gateway is shutting down');
    this.groups.clear();
  }

  private group(readOnlyPaths: string[]): HostGroup {
    const key = [...readOnlyPaths].sort().join('\n');
    let group = this.groups.get(key);
    if (!group) {
      group = { host: null, starting: null, slots: new BoundedQueue(this.options.maxCalls, this.options.maxQueue, SandboxQueueFullError.refusal('isolate')), unavailable: null };
      this.groups.set(key, group);
    }
    return group;
  }

  private host(group: HostGroup, readOnlyPaths: string[]): Promise<PluginProcess> {
    if (group.host?.alive) return Promise.resolve(group.host);
    if (group.unavailable) return Promise.reject(new SandboxError(group.unavailable));
    group.starting ??= this.processes.spawn(this.recipe(readOnlyPaths)).then(
      (host) => {
        group.starting = null;
        if (host.ready.guest !== 'isolated-vm') {
          host.kill('isolated-vm did not load');
          group.unavailable = `the isolate host could not load isolated-vm: ${host.ready.guestError ?? 'unknown error'}`;
          this.lastHostError = group.unavailable;
          throw new SandboxError(group.unavailable);
        }
        group.host = host;
        host.onceExit(() => {
          if (group.host === host) group.host = null;
        });
        return host;
      },
      (err: unknown) => {
        group.starting = null;
        throw err;
      },
    );
    return group.starting;
  }

  private recipe(readOnlyPaths: string[]): ProcessRecipe {
    return {
      key: `isolate-host\n${readOnlyPaths.join('\n')}`,
      label: 'isolate host',
      argv: pluginHostArgv({ guest: 'isolated-vm', heapMb: this.options.heapMb, shared: true, onLoadLimitMs: this.processes.onLoadTimeoutMs }),
      readOnlyPaths,
      limits: { ...DEFAULT_PROCESS_LIMITS, memoryMb: this.options.heapMb, outputBytes: 64 * 1024 * 1024, maxProcesses: 256 },
      dataMb: this.options.dataMb,
      // CPU time adds up over the host's life; each isolate has its own CPU timeout instead.
      cpuSeconds: null,
    };
  }

  /** After a call timed out: a host whose event loop is stuck (a hook spinning) is replaced. */
  private checkResponsive(host: PluginProcess): void {
    const timer = setTimeout(() => host.kill(`unresponsive for ${PING_MS} ms after a call timed out`), PING_MS);
    host.load('conveyor:ping').catch(() => undefined).finally(() => clearTimeout(timer));
  }
}
