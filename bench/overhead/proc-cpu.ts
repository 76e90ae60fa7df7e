import { readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU times in these ticks (100 on every mainstream architecture). */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU time of another process, all its threads, in ms, read from /proc/<pid>/stat
 * (10 ms resolution); NaN where /proc is not available (macOS), so reports show "–", not a lie.
 */
export function processCpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return NaN;
  }
  // The command name (field 2) may contain spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

/**
 * Waits until a process uses less than `maxShare` of a core over `windowMs`, or `timeoutMs` has
 * passed. A server keeps working for a while after it says it is listening (our gateway: worker
 * threads loading plugins, about 2 s of CPU); measured from the start, that work would be charged
 * to the first level's tokens.
 */
export async function untilQuiet(cpuMs: () => number, options: { windowMs?: number; maxShare?: number; timeoutMs?: number } = {}): Promise<void> {
  const { windowMs = 500, maxShare = 0.1, timeoutMs = 20_000 } = options;
  const start = performance.now();
  for (;;) {
    const before = cpuMs();
    if (Number.isNaN(before)) return;
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    if (cpuMs() - before <= maxShare * windowMs || performance.now() - start >= timeoutMs) return;
  }
}
