import { MAX_TIMER_MS } from '../../core/max-timer-ms.ts';
import type { GuestRunOptions } from '../../plugins/kit/guest-js.ts';

const DEFAULT_TIMEOUT_MS = 1000;

/**
 * The budget of one `ctx.guest.run`, the same in both engines. A value no timer can keep is the
 * plugin's own mistake, thrown as such: past 2^31 − 1 ms Node's timer fired at once and the guest
 * "ran longer than 3000000000 ms"; 0, a fraction or NaN reached the engines as they took them.
 */
export function guestTimeoutMs(options: GuestRunOptions): number {
  const value = options.timeoutMs;
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS) {
    throw new RangeError(`ctx.guest.run: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${String(value)}`);
  }
  return value;
}
