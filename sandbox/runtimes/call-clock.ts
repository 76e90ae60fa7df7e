/**
 * How long a plugin's onAbort may take in `thread` and `process` (and the isolate host) before the
 * runtime stops waiting: a thread task running onAbort is then aborted (piscina terminates its
 * worker); a process whose host has not answered `abort` with `aborted` is killed. onAbort only
 * releases what onStart/onPiece took (closes a socket, drops a draft, kills a child): that takes
 * milliseconds, and 1 s leaves a loaded machine room to schedule it, while a hung onAbort holds a
 * worker or one of the pool's process slots no longer than that.
 */
export const ON_ABORT_GRACE_MS = 1000;

/**
 * A plugin call's time limit (`limits.timeoutMs`), counted the way the python cell counts its
 * wall clock: while the model is still writing the call, only the time its hooks are at work
 * counts (waiting for the next piece is the model's time, not the tool's); from the end of the
 * call on, every millisecond does. So partial execution, which opens a call as soon as its name
 * is decoded, never turns a call that would finish in time after a sequential decode into a
 * timeout, and a hook that hangs is still stopped.
 */
export class CallClock {
  private usedMs = 0;
  private working = 0;
  private since = 0;
  private timer: NodeJS.Timeout | undefined;
  private final = false;
  private stopped = false;
  private readonly limitMs: number;
  private readonly expire: () => void;

  constructor(limitMs: number, expire: () => void) {
    this.limitMs = limitMs;
    this.expire = expire;
  }

  /** Hook work begins (a task sent, a verdict awaited); call the returned function when it is over. */
  work(): () => void {
    if (this.final || this.stopped) return () => undefined;
    if (this.working++ === 0) {
      this.since = performance.now();
      this.arm(this.limitMs - this.usedMs);
    }
    let over = false;
    return () => {
      if (over) return;
      over = true;
      if (this.final || this.stopped || --this.working > 0) return;
      this.usedMs += performance.now() - this.since;
      clearTimeout(this.timer);
    };
  }

  /** The call's arguments are complete: from now on every millisecond counts. */
  finalStretch(): void {
    if (this.final || this.stopped) return;
    this.final = true;
    const used = this.usedMs + (this.working > 0 ? performance.now() - this.since : 0);
    clearTimeout(this.timer);
    this.arm(this.limitMs - used);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(leftMs: number): void {
    this.timer = setTimeout(() => {
      if (!this.stopped) this.expire();
    }, Math.max(0, leftMs));
  }
}
