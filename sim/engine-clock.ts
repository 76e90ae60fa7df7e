import { performance } from 'node:perf_hooks';

/**
 * The engine's notion of time, in milliseconds on a monotonic clock. Injected so tests can
 * drive the step loop by hand and check the schedule without measuring wall-clock durations.
 */
export interface EngineClock {
  now(): number;
  /** Runs `fn` once, at `atMs` or as soon as possible after it. Returns a cancel function. */
  runAt(atMs: number, fn: () => void): () => void;
}

export const monotonicClock: EngineClock = {
  now: () => performance.now(),
  runAt(atMs, fn) {
    const timer = setTimeout(fn, Math.max(0, atMs - performance.now()));
    return () => clearTimeout(timer);
  },
};
