import { performance } from 'node:perf_hooks';
import { readdirSync, readFileSync } from 'node:fs';

/** One row of /proc as seen from this (the host's) PID namespace. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  /** Single-letter state from /proc/PID/stat; 'Z' is a zombie (dead, not yet reaped). */
  state: string;
  comm: string;
}

/** Snapshot of every process visible in /proc. Processes that vanish mid-walk are skipped. */
export function readProcessTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    // comm may contain spaces and parentheses: it ends at the last ')'.
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const rest = stat.slice(close + 2).split(' ');
    const ppid = Number(rest[1]);
    if (!Number.isFinite(ppid)) continue;
    table.set(Number(name), { pid: Number(name), ppid, state: rest[0] ?? '?', comm: stat.slice(open + 1, close) });
  }
  return table;
}

/** Live (non-zombie) descendants of `root`, in breadth-first order; `root` itself excluded. */
export function descendantPids(root: number, table: Map<number, ProcEntry> = readProcessTable()): number[] {
  const children = new Map<number, number[]>();
  for (const entry of table.values()) {
    const list = children.get(entry.ppid);
    if (list) list.push(entry.pid);
    else children.set(entry.ppid, [entry.pid]);
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (table.get(pid)?.state !== 'Z') out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * SIGKILLs `root` and everything below it. Everything is stopped first (a stopped process cannot
 * fork, and a fork bomb keeps forking between a walk and the kills) and killed only once the tree
 * stops growing, so no process gets re-parented out of reach. Returns false if the tree was
 * still growing after `rounds` walks.
 */
export function killProcessTree(root: number, rounds = 50): boolean {
  const frozen = new Set<number>();
  let settled = false;
  for (let i = 0; i < rounds && !settled; i++) {
    const table = readProcessTable();
    const found = descendantPids(root, table);
    const rootEntry = table.get(root);
    if (rootEntry && rootEntry.state !== 'Z') found.unshift(root);
    settled = true;
    for (const pid of found) {
      if (frozen.has(pid)) continue;
      settled = false;
      frozen.add(pid);
      signal(pid, 'SIGSTOP');
    }
  }
  for (const pid of frozen) signal(pid, 'SIGKILL');
  return settled;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone, or not ours to signal
  }
}

/**
 * Resolves true once none of `pids` runs (each gone or a zombie), false if one still does after
 * `limitMs`. A SIGKILLed process is not gone at once: the kernel tears it down (its memory, its
 * namespaces) first, which on a loaded machine took long enough for a pool's close() to have
 * resolved with its plugins' sandboxed children still there. Reads /proc, so a process of
 * another uid (a sandbox's dropped uid) counts as it should.
 */
export async function untilStopped(pids: readonly number[], limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  let left = pids.filter(running);
  while (left.length > 0) {
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
    left = left.filter(running);
  }
  return true;
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Whether a process with this pid exists (another user's included: kill answers EPERM for it). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux's USER_HZ: /proc reports CPU times in these ticks (100 on every mainstream architecture). */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU time of a process, all its threads, in ms, from /proc/<pid>/stat (10 ms
 * resolution); NaN where /proc cannot say (gone, or not Linux).
 */
export function processCpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return NaN;
  }
  // The command name (field 2) may contain spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * The most CPU time any one process of `root`'s tree has used, in ms (RLIMIT_CPU holds per
 * process): `root` and its descendants, found through /proc/<pid>/task/<tid>/children, which
 * reads a few small files rather than the whole process table. NaN where /proc cannot say.
 */
export function maxCpuMsInTree(root: number): number {
  let max = NaN;
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const ms = processCpuMs(pid);
    if (!Number.isNaN(ms)) max = Number.isNaN(max) ? ms : Math.max(max, ms);
    queue.push(...childPids(pid));
  }
  return max;
}

function childPids(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').split(' ')) if (child.trim() !== '') children.push(Number(child));
    } catch {
      // the thread ended meanwhile
    }
  }
  return children;
}
