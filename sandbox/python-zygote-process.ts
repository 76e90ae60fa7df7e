import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { SandboxError } from '../core/errors.ts';
import { NdjsonLineSplitter, readyMessageSchema, zygoteMessageSchema, type CellMessage, type ReadyMessage, type ZygoteCommand } from './python-ipc.ts';
import type { LaunchPlan } from './python-launch.ts';
import { descendantPids, killProcessTree, readProcessTable } from './process-tree.ts';

const STDERR_TAIL = 4096;

/**
 * One running zygote: spawns it, waits for its `ready`, routes cell messages by id, and kills
 * its whole host-side process tree when asked or when the gateway closes it.
 */
export class ZygoteProcess {
  readonly ready: ReadyMessage;
  readonly plan: LaunchPlan;
  private readonly child: ChildProcess;
  private readonly channel: Duplex;
  private readonly routes = new Map<string, (message: CellMessage) => void>();
  private readonly exitListeners = new Set<(reason: string) => void>();
  private exited: string | null = null;
  private closing = false;
  private stderrTail: string;

  private constructor(plan: LaunchPlan, child: ChildProcess, channel: Duplex, ready: ReadyMessage, stderrTail: string) {
    this.plan = plan;
    this.child = child;
    this.channel = channel;
    this.ready = ready;
    this.stderrTail = stderrTail;
  }

  /** Starts a zygote and resolves once it has imported, probed a cell and said `ready`. */
  static start(plan: LaunchPlan, timeoutMs: number): Promise<ZygoteProcess> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(plan.command, plan.args, {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        // Its own process group, as the plugin processes have: a terminal's Ctrl-C (SIGINT to the
        // foreground group) reaches the gateway, whose shutdown grace lets the cells running finish;
        // sharing the group, the zygote died at once and every cell with it.
        detached: true,
        env: plan.env,
        ...(plan.uid !== undefined ? { uid: plan.uid, gid: plan.gid } : {}),
      });
      const channel = child.stdio[3] as Duplex;
      let stderr = '';
      const collect = (chunk: Buffer): void => {
        stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      const splitter = new NdjsonLineSplitter();
      let zygote: ZygoteProcess | null = null;
      let settled = false;
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        killProcessTree(child.pid ?? -1);
        reject(new SandboxError(`the Python zygote (${plan.mode}) did not start: ${why}${stderr ? `\n${stderr.trim()}` : ''}`));
      };
      const timer = setTimeout(() => fail(`no ready message within ${timeoutMs} ms`), timeoutMs);
      child.on('error', (err) => fail(err.message));
      channel.setEncoding('utf8');
      channel.on('error', () => undefined);
      channel.on('data', (chunk: string) => {
        for (const line of splitter.push(chunk)) {
          if (zygote) {
            zygote.receive(line);
            continue;
          }
          const parsed = readyMessageSchema.safeParse(safeJson(line));
          if (!parsed.success) {
            fail(`unexpected first message: ${line.slice(0, 200)}`);
            return;
          }
          settled = true;
          clearTimeout(timer);
          zygote = new ZygoteProcess(plan, child, channel, parsed.data, stderr);
          child.stdout?.off('data', collect);
          child.stderr?.off('data', collect);
          child.stdout?.on('data', (c: Buffer) => zygote?.noteStderr(c));
          child.stderr?.on('data', (c: Buffer) => zygote?.noteStderr(c));
          resolvePromise(zygote);
        }
      });
      child.on('exit', (code, signal) => {
        const why = `exited with ${signal ? `signal ${signal}` : `code ${code}`}`;
        if (zygote) zygote.onExit(zygote.closing ? 'the sandbox was closed' : why);
        else fail(why);
      });
    });
  }

  get alive(): boolean {
    return this.exited === null;
  }

  /** The zygote's pid in the host's namespace (bwrap and its init sit above it). */
  hostPid(): number | null {
    const root = this.child.pid;
    if (root === undefined || !this.alive) return null;
    const table = readProcessTable();
    for (const pid of [root, ...descendantPids(root, table)]) {
      const comm = table.get(pid)?.comm ?? '';
      if (comm !== 'bwrap' && comm !== 'unshare') return pid;
    }
    return null;
  }

  /** The zygote's real uid as the host sees it. */
  hostUid(): number | null {
    const pid = this.hostPid();
    if (pid === null) return null;
    try {
      const match = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) : null;
    } catch {
      return null;
    }
  }

  /** Live processes started for cells, as host pids. */
  cellPids(): number[] {
    const zygotePid = this.hostPid();
    return zygotePid === null ? [] : descendantPids(zygotePid);
  }

  route(id: string, handler: (message: CellMessage) => void): void {
    this.routes.set(id, handler);
  }

  unroute(id: string): void {
    this.routes.delete(id);
  }

  onceExit(listener: (reason: string) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  send(command: ZygoteCommand): void {
    if (!this.alive || this.channel.destroyed) return;
    this.channel.write(`${JSON.stringify(command)}\n`);
  }

  /** SIGKILLs the zygote and everything below it, as seen from the host. */
  kill(reason: string): void {
    if (this.child.pid !== undefined) killProcessTree(this.child.pid);
    this.onExit(reason);
  }

  /** Asks the zygote to kill its cells and exit; kills it outright if it does not within `graceMs`. */
  async close(graceMs = 2000): Promise<void> {
    if (!this.alive) return;
    this.closing = true;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.send({ t: 'shutdown' });
    const timer = setTimeout(() => this.kill('closed'), graceMs);
    await exited;
    clearTimeout(timer);
    this.onExit('closed');
  }

  lastStderr(): string {
    return this.stderrTail.trim();
  }

  private noteStderr(chunk: Buffer): void {
    this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
  }

  private receive(line: string): void {
    if (!line.trim()) return;
    const json = safeJson(line);
    const parsed = zygoteMessageSchema.safeParse(json);
    if (parsed.success && parsed.data.t !== 'ready') return void this.routes.get(parsed.data.id)?.(parsed.data);
    const relayed = relayedFromCell(json);
    if (relayed === null) return;
    if (relayed !== undefined) return void this.routes.get(relayed.id)?.(relayed);
    // A zygote that breaks the protocol cannot be trusted with its cells any more.
    this.kill(`protocol error: ${line.slice(0, 200)}`);
  }

  private onExit(reason: string): void {
    if (this.exited !== null) return;
    this.exited = reason;
    this.channel.destroy();
    for (const listener of [...this.exitListeners]) listener(reason);
    this.exitListeners.clear();
    this.routes.clear();
  }
}

/**
 * A message the zygote relays with words a cell wrote itself into its control pipe (its code can:
 * the pipe is its fd 3), which no shape check could vouch for: a `unit` with lines that are not
 * numbers, an `exit` with a forged report. That is the cell's doing, not the zygote's, and it costs
 * the cell alone: the unit is dropped (null), the exit goes on without the report. Killing the
 * zygote for it, as for its own protocol errors, ended every other request's cells too.
 * Undefined: not such a message.
 */
function relayedFromCell(json: unknown): CellMessage | null | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const message = json as Record<string, unknown>;
  if (typeof message['id'] !== 'string' || message['id'] === '') return undefined;
  if (message['t'] === 'unit') return null;
  if (message['t'] !== 'exit') return undefined;
  const withoutReport = zygoteMessageSchema.safeParse({ ...message, result: null });
  return withoutReport.success && withoutReport.data.t === 'exit' ? withoutReport.data : undefined;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
