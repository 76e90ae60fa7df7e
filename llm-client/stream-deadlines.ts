import { performance } from 'node:perf_hooks';
import {
  UpstreamFirstTokenTimeoutError,
  UpstreamIdleTimeoutError,
  UpstreamTotalTimeoutError,
  type UpstreamError,
} from '../core/errors.ts';
import type { UpstreamTimeouts } from './upstream-options.ts';

/**
 * When a stream's clocks started (performance.now()). With replicas a request may make several
 * attempts, one per replica: the first-token wait is a phase of one attempt (the replica tried
 * after another failed gets all of it), the total bounds the whole request, attempts included.
 */
export interface DeadlineStarts {
  attempt: number;
  request: number;
}

/**
 * The token-phase timers of one stream: first token (from the attempt's start), then idle gaps
 * between chunks, plus the optional total (from the request's start). Connect and headers
 * timeouts are undici's own. Fires `onExpire` at most once.
 *
 * The idle timer is re-armed lazily: a chunk only records when it arrived, and the timer, when it
 * fires, checks that time and sleeps again for what is left. Clearing and creating a timer per
 * chunk cost two timer-list operations and a Timeout object on every token's path.
 */
export class StreamDeadlines {
  private readonly timeouts: UpstreamTimeouts;
  private readonly onExpire: (error: UpstreamError) => void;
  private readonly readsPending: () => boolean;
  #phase: NodeJS.Timeout | undefined;
  /** A phase's clock ran out: the verdict, after the poll phase (#lookAgain). */
  #verdict: NodeJS.Immediate | undefined;
  #total: NodeJS.Timeout | undefined;
  /** When the total runs out (performance.now()); undefined without totalMs. */
  #totalDue: number | undefined;
  /** The total's timer fired (it may fire a little before #totalDue: libuv's clock is cached per turn). */
  #totalFired = false;
  #body: NodeJS.Timeout | undefined;
  /** The total or an error body's wait ran out: the verdict, after the poll phase (#lookAgainThenExpire). */
  #endVerdict: NodeJS.Immediate | undefined;
  #tokensFlowing = false;
  #idleArmed = false;
  #paused = false;
  #expired = false;
  /** The model has finished (generationOver): only the total deadline still runs. */
  #generationOver = false;
  /** When the idle clock last restarted (performance.now()). */
  #idleFrom = 0;
  /** When the first token is due (performance.now()); moved on by the time spent paused. */
  #firstTokenDue = 0;
  /** While paused before the first token: what was left of its wait. */
  #firstTokenLeft = 0;

  /** `readsPending`: the stream has read chunks it has not handed over yet (held for first-token-first's pass). */
  constructor(timeouts: UpstreamTimeouts, onExpire: (error: UpstreamError) => void, readsPending: () => boolean = () => false) {
    this.timeouts = timeouts;
    this.onExpire = onExpire;
    this.readsPending = readsPending;
  }

  start(starts?: DeadlineStarts): void {
    const now = performance.now();
    this.#firstTokenDue = (starts?.attempt ?? now) + this.timeouts.firstTokenMs;
    this.#armFirstToken(Math.max(0, Math.ceil(this.#firstTokenDue - now)));
    this.#armTotal(starts?.request ?? now);
  }

  /**
   * The total deadline alone, from `requestStart` (performance.now()): a forwarded request's
   * token phases are undici's body timeout (forward-handler.ts), its total is this one.
   */
  startTotalOnly(requestStart: number = performance.now()): void {
    this.#generationOver = true;
    this.#armTotal(requestStart);
  }

  /** The request has no time left: its total deadline has passed, whether or not its verdict has been given. */
  #totalRanOut(): boolean {
    return this.#totalFired || (this.#totalDue !== undefined && performance.now() >= this.#totalDue);
  }

  /** A chunk arrived; `generated` when it carried output (a token, a tool-call fragment, a finish). */
  chunkArrived(generated: boolean): void {
    if (generated) this.#tokensFlowing = true;
    if (!this.#tokensFlowing || this.#paused || this.#generationOver) return;
    this.#idleFrom = performance.now();
    if (!this.#idleArmed) this.#armIdle(this.timeouts.idleMs);
  }

  /**
   * While the consumer holds a part the socket is not read, so a slow consumer must not be
   * blamed on the upstream: the phase's clock (first token or idle) stops here and goes on in
   * `resume`. The total deadline keeps running: it bounds the whole request, consumer included.
   */
  pause(): void {
    if (this.#paused || this.#expired) return;
    this.#paused = true;
    if (!this.#tokensFlowing) this.#firstTokenLeft = this.#firstTokenDue - performance.now();
    this.#disarm();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#generationOver) return;
    const now = performance.now();
    if (this.#tokensFlowing) {
      this.#idleFrom = now;
      this.#armIdle(this.timeouts.idleMs);
      return;
    }
    this.#firstTokenDue = now + this.#firstTokenLeft;
    this.#armFirstToken(Math.max(0, Math.ceil(this.#firstTokenLeft)));
  }

  /**
   * The finish_reason has come: silence from here is the answer's tail, which answer-tail.ts times
   * (a short wait for the usage chunk and [DONE]), not a stalled model.
   */
  generationOver(): void {
    this.#generationOver = true;
    this.#disarm();
  }

  /**
   * The answer is an error (a non-2xx status, or a 200 that is not an event stream): no token will
   * come, only a body that says why, which gets `ms` from here instead of the first-token wait. Like
   * the total, this wait runs through pauses: the consumer holds no part of an error answer.
   */
  bodyDue(ms: number): void {
    this.#generationOver = true;
    this.#disarm();
    this.#body = setTimeout(() => this.#lookAgainThenExpire(new UpstreamIdleTimeoutError(ms)), ms);
  }

  clear(): void {
    this.#disarm();
    clearTimeout(this.#total);
    clearTimeout(this.#body);
    clearImmediate(this.#endVerdict);
  }

  #armTotal(requestStart: number): void {
    const { totalMs } = this.timeouts;
    if (totalMs === undefined) return;
    this.#totalDue = requestStart + totalMs;
    const left = Math.max(0, Math.ceil(this.#totalDue - performance.now()));
    this.#total = setTimeout(() => {
      this.#totalFired = true;
      this.#lookAgainThenExpire(new UpstreamTotalTimeoutError(totalMs));
    }, left);
  }

  #armFirstToken(ms: number): void {
    this.#phase = setTimeout(() => this.#lookAgain(this.#firstTokenVerdict), ms);
  }

  #armIdle(ms: number): void {
    if (this.#expired) return;
    this.#disarm();
    this.#idleArmed = true;
    this.#phase = setTimeout(this.#idleCheck, ms);
  }

  #disarm(): void {
    clearTimeout(this.#phase);
    clearImmediate(this.#verdict);
    this.#phase = undefined;
    this.#verdict = undefined;
    this.#idleArmed = false;
  }

  readonly #idleCheck = (): void => {
    const silent = performance.now() - this.#idleFrom;
    if (silent >= this.timeouts.idleMs) this.#lookAgain(this.#idleVerdict);
    // Whole milliseconds: Node keeps one timer list per distinct duration.
    else this.#armIdle(Math.ceil(this.timeouts.idleMs - silent));
  };

  /**
   * A phase's clock ran out. Timers run before the poll phase reads the sockets, so a chunk that
   * came in time while the event loop was blocked (a long synchronous task) is in the socket
   * buffer, unread: the verdict waits for the poll phase (setImmediate), and for the reads it held
   * back for first-token-first's pass to be handed over, which restart the clock they carry a token.
   */
  #lookAgain(verdict: () => void): void {
    this.#verdict = setImmediate(() => {
      if (this.readsPending()) this.#lookAgain(verdict);
      else verdict();
    });
  }

  /**
   * The total, or an error answer's body wait, ran out: as with a phase's clock (#lookAgain), what
   * came in time while the loop was blocked is read first. An error body that had all come was cut
   * to what the last read before the block held (a bare status, JSON cut mid-message), and an answer
   * that had ended in time failed. The verdict has its own slot: a token read meanwhile re-arms the
   * phase clocks (#disarm), which must not cancel it. Settling meanwhile clears it (clear()). The
   * total and the body's wait share the slot: when both run out, the later verdict replaces the
   * earlier (#expire gives the total's error either way), whose handle, lost, clear() could not cancel.
   */
  #lookAgainThenExpire(error: UpstreamError): void {
    clearImmediate(this.#endVerdict);
    this.#endVerdict = setImmediate(() => {
      // Not behind a paused consumer's held events: that wait is the consumer's, which the total bounds too.
      if (this.readsPending() && !this.#paused) this.#lookAgainThenExpire(error);
      else this.#expire(error);
    });
  }

  /** A first token that came meanwhile armed the idle clock, which cleared this verdict (#disarm). */
  readonly #firstTokenVerdict = (): void => this.#expire(new UpstreamFirstTokenTimeoutError(this.timeouts.firstTokenMs));

  readonly #idleVerdict = (): void => {
    this.#verdict = undefined;
    this.#idleArmed = false;
    const silent = performance.now() - this.#idleFrom;
    if (silent >= this.timeouts.idleMs) this.#expire(new UpstreamIdleTimeoutError(this.timeouts.idleMs));
    else this.#armIdle(Math.ceil(this.timeouts.idleMs - silent));
  };

  #expire(error: UpstreamError): void {
    if (this.#expired) return;
    this.#expired = true;
    this.clear();
    // A loop blocked past two clocks fires both in one timers phase, the earlier-due first: an error
    // body's 2 s wait or a first-token wait that ran out with the total failed over to another
    // replica, which then had no time left (its total fired at once).
    const { totalMs } = this.timeouts;
    if (totalMs !== undefined && !(error instanceof UpstreamTotalTimeoutError) && this.#totalRanOut()) error = new UpstreamTotalTimeoutError(totalMs);
    this.onExpire(error);
  }
}
