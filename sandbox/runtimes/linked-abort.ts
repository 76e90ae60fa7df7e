// A call's abort reaching a process start it waits for, without AbortSignal.any (process-pool.ts).

/**
 * Aborts when `a` or `b` does, until unlinked. Not AbortSignal.any(): on Node 20 every signal it
 * makes stays reachable from its sources (about 1.2 KB per call start kept by the pool's own
 * signal, for the pool's lifetime).
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; unlink: () => void } {
  const either = new AbortController();
  const onA = (): void => either.abort(a.reason);
  const onB = (): void => either.abort(b.reason);
  const unlink = (): void => {
    a.removeEventListener('abort', onA);
    b.removeEventListener('abort', onB);
  };
  if (a.aborted) onA();
  else if (b.aborted) onB();
  else {
    a.addEventListener('abort', onA, { once: true });
    b.addEventListener('abort', onB, { once: true });
  }
  return { signal: either.signal, unlink };
}

/** `promise`, or `signal`'s reason once it aborts first. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
