import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { SandboxError } from '../../core/errors.ts';
import { killProcessTree } from '../process-tree.ts';
import { parseChildMessage, type CallMessage, type ChildMessage, type HostMessage } from './plugin-protocol.ts';
import type { ProcessLaunchPlan } from './process-launch.ts';
import { describeExit, startExitWords, type ProcessExit } from './process-exit.ts';
import { readChannel } from './process-channel.ts';
import { ProcessOutput } from './process-output.ts';
import { QuietProgress } from './quiet-progress.ts';
import { ReadyDeadline, startFailure } from './process-start-failure.ts';

type ReadyMessage = Extract<ChildMessage, { t: 'ready' }>;

export interface PluginProcessOptions {
  startupTimeoutMs: number;
  /** stdout+stderr bytes before the process is killed. */
  outputBytes: number;
  /** Each chunk the process prints, as it comes (ProcessPoolOptions.onOutput). */
  onOutput?: (text: string) => void;
  /** Kills the process while it is still starting (the pool is closing). */
  signal?: AbortSignal;
}

/** How long an exited process's pipes may take to deliver their last bytes. */
const EXIT_DRAIN_MS = 250;
/** How long a process whose channel closed may take to exit (its exit says why) before it counts as one that closed fd 3. */
const CHANNEL_END_MS = 1000;

/**
 * The gateway's side of one sandboxed plugin process: spawns it in its own session, waits for
 * `ready`, routes messages by callId, and SIGKILLs its whole process tree when asked.
 */
export class PluginProcess {
  private readonly child: ChildProcess;
  private readonly channel: Duplex;
  private readonly output: ProcessOutput;
  readonly ready: ReadyMessage;
  private readonly routes = new Map<string, (message: CallMessage) => void>();
  private readonly loads = new Map<string, Array<(m: Extract<ChildMessage, { t: 'loaded' }>) => void>>();
  private readonly exitListeners = new Set<(exit: ProcessExit) => void>();
  /** Calls whose progress is past their budget: their progress lines are dropped unread (quietProgress). */
  private readonly quiet = new QuietProgress();
  private exit: ProcessExit | null = null;
  private killedFor: string | null = null;
  /**
   * Every call id routed here, once the process serves its calls one at a time (oneCallAtATime):
   * a message under any other id answers nothing the gateway sent. Null on a shared isolate host,
   * the gateway's own code, which serves calls for as long as it runs (the set would only grow).
   */
  private given: Set<string> | null = null;

  private constructor(
    child: ChildProcess,
    channel: Duplex,
    ready: ReadyMessage,
    output: ProcessOutput,
  ) {
    this.child = child;
    this.channel = channel;
    this.output = output;
    this.ready = ready;
  }

  static start(plan: ProcessLaunchPlan, options: PluginProcessOptions): Promise<PluginProcess> {
    return new Promise((resolve, reject) => {
      const child = spawn(plan.command, plan.args, {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        env: plan.env,
        cwd: plan.cwd,
        // Own session and process group: a kill of -pid reaches everything that did not setsid.
        detached: true,
        ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid } : {}),
      });
      const channel = child.stdio[3] as Duplex;
      const output = new ProcessOutput(options.onOutput);
      let proc: PluginProcess | null = null;
      let settled = false;
      const onAbort = (): void => {
        const reason: unknown = options.signal?.reason;
        if (reason instanceof ReadyDeadline) fail(`no ready message within ${reason.limitMs} ms`, { noReady: true });
        else fail(String(reason ?? 'aborted'));
      };
      /** `told`: `why` already quotes what the process printed (an exit's words do). */
      const fail = (why: string, { told = false, noReady = false } = {}): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (child.pid !== undefined) killProcessTree(child.pid);
        const error = startFailure(why, output.tail, { told, noReady });
        // Only once it is gone: the caller then frees its uid and working directory, and a closing
        // pool counts on nothing of it being left.
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) reject(error);
        else child.once('exit', () => reject(error));
      };
      const timer = setTimeout(() => fail(`no ready message within ${options.startupTimeoutMs} ms`, { noReady: true }), options.startupTimeoutMs);
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      const collect = (chunk: Buffer): void => {
        if (output.collect(chunk) > options.outputBytes) (proc ? proc.kill(`it printed more than ${options.outputBytes} bytes`) : fail('output limit'));
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      child.on('error', (err) => fail(err.message));
      // What it sends on fd 3: `ready` first, then messages for the calls routed to it.
      const drainChannel = readChannel(channel, {
        deaf: () => (proc ? proc.killedFor !== null : settled),
        starting: () => !proc,
        tooLong: (why) => (proc ? proc.kill(why) : fail(why)),
        line: (line) => {
          if (proc?.quiet.drops(line)) return false;
          const parsed = parseChildMessage(line);
          if ('why' in parsed) {
            // The line as it came, then what is wrong with it (a field's type, an unknown `t`).
            if (proc) proc.kill(`protocol error: ${line.slice(0, 200)} (${parsed.why})`);
            else fail(`unexpected message: ${line.slice(0, 200)} (${parsed.why})`);
            return true;
          }
          if (proc) {
            proc.receive(parsed.message);
            // Killed for that line (an answer out of turn, an id never given): the lines behind it
            // in this chunk are not heard either, or a result among them still ended the call `ok`.
            return proc.killedFor !== null;
          }
          if (parsed.message.t === 'ready') {
            settled = true;
            clearTimeout(timer);
            options.signal?.removeEventListener('abort', onAbort);
            proc = new PluginProcess(child, channel, parsed.message, output);
            resolve(proc);
          } else {
            fail(`first message was ${parsed.message.t}, not ready`);
          }
          return false;
        },
      });
      // End of file, or a write that found no reader: nothing holds the child's end of fd 3 any more
      // (bwrap keeps no copy, nor do exec_launcher.py's waiting processes under `unshare`; only
      // `unshare --fork`, used without the Python launcher, does). It can answer nothing, so a
      // call, or the start-up, would otherwise wait for its time limit.
      channel.once('close', () => {
        const check = setTimeout(() => {
          if (child.exitCode !== null || child.signalCode !== null || hasExited(child.pid)) return;
          if (proc) proc.kill('it closed its protocol channel (fd 3) and kept running');
          else fail('it closed its protocol channel (fd 3)');
        }, CHANNEL_END_MS);
        child.once('exit', () => clearTimeout(check));
      });
      // 'exit' can come before the last stderr bytes are read, V8's "heap out of memory" among
      // them, and the reason is read from that tail: wait for 'close' (every pipe ended), but only
      // briefly, since a descendant that escaped the kill could hold a pipe open.
      child.on('exit', (code, signal) => {
        let done = false;
        const finish = (): void => {
          if (done) return;
          done = true;
          clearTimeout(grace);
          // A result read just before the exit is still the call's, not lost to it.
          drainChannel();
          if (proc) proc.onExit(code, signal);
          else fail(startExitWords({ killedFor: null, code, signal, stderrTail: output.tail.trim(), outOfMemory: output.outOfMemory }), { told: true });
        };
        const grace = setTimeout(finish, EXIT_DRAIN_MS);
        child.once('close', finish);
      });
    });
  }

  get alive(): boolean {
    return this.exit === null;
  }

  /** Alive and not killed: a killed process stays `alive` until its exit is read, and must take no call meanwhile. */
  get usable(): boolean {
    return this.exit === null && this.killedFor === null;
  }

  /**
   * A kept process (reuseProcess) takes its next call: the output limit counts from here, and what
   * an exit reports (its stderr tail, an out-of-memory line) is this call's, not another request's.
   */
  nextCall(): void {
    this.output.nextCall();
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  /**
   * The process serves calls one after another (runtime `process`: a fresh one per call, or a kept
   * one for at most MAX_CALLS_PER_PROCESS calls), so the ids it was given stay few: from now on a
   * message under an id it was never given is a protocol error. Dropped, it left the call it was
   * meant for waiting for its time limit, which named no cause.
   */
  oneCallAtATime(): void {
    this.given ??= new Set(this.routes.keys());
  }

  route(callId: string, handler: (message: CallMessage) => void): void {
    this.given?.add(callId);
    this.routes.set(callId, handler);
  }

  unroute(callId: string): void {
    this.routes.delete(callId);
    this.quiet.delete(callId);
  }

  /** The call's progress is past its budget: its progress lines are no longer parsed, nor routed. */
  quietProgress(callId: string): void {
    this.quiet.add(callId);
  }

  send(message: HostMessage): void {
    if (this.alive && !this.channel.destroyed) this.channel.write(`${JSON.stringify(message)}\n`);
  }

  /** Imports a module ahead of the first call; resolves with the plugin name it exports. */
  load(module: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const list = this.loads.get(module) ?? [];
      list.push((m) => (m.error ? reject(new SandboxError(m.error)) : resolve(m.plugin ?? '')));
      this.loads.set(module, list);
      const off = this.onceExit((exit) => reject(new SandboxError(`the plugin process ended while loading: ${describeExit(exit).message}`)));
      list.push(() => off());
      this.send({ t: 'load', module });
    });
  }

  /** Calls `listener` once when the process is gone (at once if it already is). */
  onceExit(listener: (exit: ProcessExit) => void): () => void {
    if (this.exit) {
      listener(this.exit);
      return () => undefined;
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** SIGKILLs the process, its process group and every descendant; idempotent. */
  kill(reason: string): void {
    this.killedFor ??= reason;
    const pid = this.child.pid;
    if (pid === undefined || !this.alive) return;
    killProcessTree(pid);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // the group is already empty
    }
  }

  private receive(message: ChildMessage): void {
    if (message.t === 'loaded') {
      const waiters = this.loads.get(message.module) ?? [];
      this.loads.delete(message.module);
      for (const waiter of waiters) waiter(message);
    } else if (message.t !== 'ready') {
      const route = this.routes.get(message.callId);
      // A call already over (unrouted) may still hear answers crossing its end: those are dropped.
      if (route) route(message);
      else if (this.given && !this.given.has(message.callId)) {
        this.kill(`protocol error: ${JSON.stringify(message).slice(0, 200)} (callId ${JSON.stringify(message.callId).slice(0, 100)} names no call this process was given)`);
      }
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exit) return;
    const pid = this.child.pid;
    // Stragglers that left the tree but kept the process group (no PID namespace here).
    if (pid !== undefined) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // none left
      }
    }
    this.exit = { killedFor: this.killedFor, code, signal, stderrTail: this.output.tail.trim(), outOfMemory: this.output.outOfMemory };
    this.channel.destroy();
    for (const listener of [...this.exitListeners]) listener(this.exit);
    this.exitListeners.clear();
    this.routes.clear();
  }
}

/** Gone or a zombie: its 'exit' is on its way (the loop may not have read it yet). */
function hasExited(pid: number | undefined): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
