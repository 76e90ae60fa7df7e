/** Waits shorter than this go unmentioned: a hook's hand-over to a free worker takes a few ms, more on a loaded machine. */
const NOTABLE_WAIT_MS = 50;

/**
 * A call's waits for a worker to begin each of its hooks (the pool's queue, a worker starting, the
 * plugin's import and onLoad), split the way CallClock counts them: before the call's end they do
 * not count against its limit, from the end on they do. A call on a busy pool read only `timed out
 * after 1500 ms`, though its hooks may have run for none of them, or it had waited seconds
 * before they began.
 */
export class WorkerWaits {
  private uncountedMs = 0;
  private countedMs = 0;
  private finalSince: number | null = null;
  /** Hooks handed to the pool that no worker has begun yet, by when. */
  private readonly waiting = new Set<{ since: number }>();

  /** A hook is handed to the pool; call the returned function (idempotent) when a worker begins it or it ends unbegun. */
  begin(): () => void {
    const wait = { since: performance.now() };
    this.waiting.add(wait);
    return () => {
      if (!this.waiting.delete(wait)) return;
      const [uncounted, counted] = this.split(wait.since, performance.now());
      this.uncountedMs += uncounted;
      this.countedMs += counted;
    };
  }

  /** The call's arguments are complete: its clock counts every millisecond from here. */
  finalStretch(): void {
    this.finalSince ??= performance.now();
  }

  /**
   * The call's timeout in words: `timed out after 1500 ms (it ran 100 ms and waited 1400 ms for a
   * free worker, not counting 3000 ms it waited for one earlier)`, each part only when its wait
   * is NOTABLE_WAIT_MS or more.
   */
  timedOut(limitMs: number): string {
    const now = performance.now();
    let uncounted = this.uncountedMs;
    let counted = this.countedMs;
    // A hook still waiting: the one the call timed out on.
    for (const { since } of this.waiting) {
      const [u, c] = this.split(since, now);
      uncounted += u;
      counted += c;
    }
    const waitedMs = Math.min(limitMs, Math.round(counted));
    const beforeMs = Math.round(uncounted);
    const within = waitedMs >= NOTABLE_WAIT_MS ? `it ran ${limitMs - waitedMs} ms and waited ${waitedMs} ms for a free worker` : '';
    const before = beforeMs >= NOTABLE_WAIT_MS ? `not counting ${beforeMs} ms it waited for ${within ? 'one' : 'a worker'} earlier` : '';
    const detail = [within, before].filter(Boolean).join(', ');
    return `timed out after ${limitMs} ms${detail ? ` (${detail})` : ''}`;
  }

  /** [uncounted, counted] ms of a wait from `since` to `until`. */
  private split(since: number, until: number): [number, number] {
    if (this.finalSince === null || until <= this.finalSince) return [until - since, 0];
    const from = Math.max(since, this.finalSince);
    return [from - since, until - from];
  }
}
