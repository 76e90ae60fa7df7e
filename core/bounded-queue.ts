/**
 * A counting semaphore with a bounded FIFO of waiters: at most `capacity` holders, at most
 * `maxWaiting` queued; one more is refused at once with `refusal`'s error (a clear error beats an
 * unbounded wait). The sandbox's runtimes bound their calls with it, the gateway its requests.
 */
export class BoundedQueue {
  readonly capacity: number;
  readonly maxWaiting: number;
  private readonly refusal: (queue: BoundedQueue) => Error;
  private holders = 0;
  private readonly waiters: Array<{ grant: () => void; refuse: (err: unknown) => void }> = [];

  constructor(capacity: number, maxWaiting: number, refusal: (queue: BoundedQueue) => Error) {
    this.capacity = capacity;
    this.maxWaiting = maxWaiting;
    this.refusal = refusal;
  }

  get active(): number {
    return this.holders;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** A release function if a slot is free now (nobody waits then), else undefined. */
  tryAcquire(): (() => void) | undefined {
    if (this.holders >= this.capacity) return undefined;
    this.holders++;
    return this.releaser();
  }

  /** Resolves with a release function once a slot is free; rejects if the queue is full or `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const release = this.tryAcquire();
    if (release) return Promise.resolve(release);
    if (this.waiters.length >= this.maxWaiting) return Promise.reject(this.refusal(this));
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
        refuse: reject,
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.grant();
      else this.holders--;
    };
  }
}
