import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `probe` every 100 ms until it returns a value, which it resolves to; fails after `timeoutMs`, naming `what`. */
export async function waitForValue<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
