import { describe, expect, it } from 'vitest';
import { guestTimeoutMs } from '../../../sandbox/runtimes/guest-timeout.ts';
import { createNodeVmGuest } from '../../../sandbox/runtimes/node-vm-guest.ts';

describe("ctx.guest.run's timeoutMs", () => {
  it('defaults to 1000 ms and takes whole milliseconds up to the longest timer Node keeps', () => {
    expect(guestTimeoutMs({})).toBe(1000);
    expect(guestTimeoutMs({ timeoutMs: 1 })).toBe(1);
    expect(guestTimeoutMs({ timeoutMs: 2 ** 31 - 1 })).toBe(2 ** 31 - 1);
  });

  it.each([3e9, 2 ** 31, 0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '100' as unknown as number])('refuses %s, naming the bound', (timeoutMs) => {
    expect(() => guestTimeoutMs({ timeoutMs })).toThrow(
      new RangeError(`ctx.guest.run: timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got ${String(timeoutMs)}`),
    );
  });

  // Regression: 3e9 ms reached the wall-clock setTimeout, which fired after 1 ms: under isolated-vm
  // every run (an isolate alone takes ~1.3 ms to make) failed as "guest code ran longer than
  // 3000000000 ms", and under node:vm any guest that awaited a callback; 0 and 1.5 failed inside
  // node:vm as the guest's own exception.
  it('rejects the run before any guest code runs (node:vm engine; isolated-vm shares the check)', async () => {
    const guest = createNodeVmGuest();
    let ran = false;
    await expect(guest.run('mark(); 1', { timeoutMs: 3e9, callbacks: { mark: () => (ran = true) } })).rejects.toThrow(RangeError);
    expect(ran).toBe(false);
    await expect(guest.run('Promise.resolve(41).then((v) => v + 1)', { timeoutMs: 2 ** 31 - 1 })).resolves.toBe(42);
  });
});
