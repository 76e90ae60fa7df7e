import { processCpuMs } from '../../sandbox/process-tree.ts';

export { processCpuMs };

/**
 * Waits until a process uses less than `maxShare` of a core over `windowMs`, or `timeoutMs` has
 * passed; true if it settled (or its CPU cannot be read, so none will be charged), false if the
 * wait gave up. A server keeps working for a while after it says it is listening (our gateway:
 * worker threads loading plugins, about 2 s of CPU); measured from the start, that work would be
 * charged to the first level's tokens, which a report must then say.
 */
export async function untilQuiet(cpuMs: () => number, options: { windowMs?: number; maxShare?: number; timeoutMs?: number } = {}): Promise<boolean> {
  const { windowMs = 500, maxShare = 0.1, timeoutMs = 20_000 } = options;
  const start = performance.now();
  for (;;) {
    const before = cpuMs();
    if (Number.isNaN(before)) return true;
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    if (cpuMs() - before <= maxShare * windowMs) return true;
    if (performance.now() - start >= timeoutMs) return false;
  }
}
