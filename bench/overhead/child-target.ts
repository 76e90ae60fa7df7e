import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { reapOnExit } from '../child-reaper.ts';
import { processCpuMs } from './proc-cpu.ts';

/** A server under test, running in its own process. */
export interface ChildTarget {
  name: string;
  pid: number;
  /** Base URL ending in /v1. */
  url: string;
  /** CPU time the process has used so far (all threads), ms; NaN where unknown. */
  cpuMs(): number;
  /** Its own `process.cpuUsage()` over IPC, µs resolution; only for children started with `ipc`. */
  selfCpuUs?: () => Promise<number>;
  close(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** Arguments to `node`. */
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** How the child says it is ready: its stdout line matching this gives the base URL (group 1). */
  urlLine: RegExp;
  /** Open an IPC channel (the child answers `{ type: 'cpu' }` with `{ type: 'cpu', us }`). */
  ipc?: boolean;
  timeoutMs?: number;
}

/** Spawns `node …args` and resolves once the child prints its URL; rejects with its stderr tail if it dies first. */
export async function spawnTarget(o: SpawnOptions): Promise<ChildTarget> {
  const child: ChildProcess = spawn(process.execPath, o.args, {
    // stdin a pipe that only closes when this process ends, however it ends: a child that exits
    // on its close (the simulator's --exit-with-stdin, exit-with-stdin.mjs) is never left behind.
    stdio: ['pipe', 'pipe', 'pipe', ...(o.ipc ? (['ipc'] as const) : [])],
    env: o.env ?? process.env,
  });
  reapOnExit(child);
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${o.name} did not start within ${o.timeoutMs ?? 30_000} ms`)), o.timeoutMs ?? 30_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.once('exit', (code, signal) => fail(new Error(`${o.name} exited (${code ?? signal}) before it was ready: ${stderr.trim().slice(-600)}`)));
    child.once('error', fail);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = o.urlLine.exec(line);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      lines.removeAllListeners('line');
      resolve(match[1]!);
    });
  });
  // Keep draining stdout so a chatty child never blocks on a full pipe.
  child.stdout!.resume();
  // A server that dies mid-run shows up as the clients' "other side closed": say who and why.
  let closing = false;
  child.once('exit', (code, signal) => {
    if (!closing) console.error(`${o.name} exited (${code ?? signal}) during the run: ${stderr.trim().slice(-1500)}`);
  });
  return {
    name: o.name,
    pid: child.pid!,
    url,
    cpuMs: () => processCpuMs(child.pid!),
    selfCpuUs: o.ipc ? () => askCpu(child) : undefined,
    close: () => {
      closing = true;
      return stop(child);
    },
  };
}

function askCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      const msg = m as { type?: string; us?: number };
      if (msg.type !== 'cpu' || typeof msg.us !== 'number') return;
      child.off('message', onMessage);
      resolve(msg.us);
    };
    child.on('message', onMessage);
    child.send({ type: 'cpu' }, (err) => err && reject(err));
  });
}

/** SIGTERM, then SIGKILL after 3 s: a benchmark must never leave servers behind. */
export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
