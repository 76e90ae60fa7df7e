import {
  UpstreamFirstTokenTimeoutError,
  UpstreamIdleTimeoutError,
  UpstreamTotalTimeoutError,
  type UpstreamError,
} from '../core/errors.ts';
import type { UpstreamTimeouts } from './upstream-options.ts';

/**
 * The token-phase timers of one stream: first token (from request start), then idle gaps
 * between chunks, plus the optional total. Connect and headers timeouts are undici's own.
 * Fires `onExpire` at most once.
 */
export class StreamDeadlines {
  #phase: NodeJS.Timeout | undefined;
  #total: NodeJS.Timeout | undefined;
  #tokensFlowing = false;
  #expired = false;

  constructor(
    private readonly timeouts: UpstreamTimeouts,
    private readonly onExpire: (error: UpstreamError) => void,
  ) {}

  start(): void {
    const { firstTokenMs, totalMs } = this.timeouts;
    this.#phase = setTimeout(() => this.#expire(new UpstreamFirstTokenTimeoutError(firstTokenMs)), firstTokenMs);
    if (totalMs !== undefined) {
      this.#total = setTimeout(() => this.#expire(new UpstreamTotalTimeoutError(totalMs)), totalMs);
    }
  }

  /** A chunk arrived; `generated` when it carried output (a token, a tool-call fragment, a finish). */
  chunkArrived(generated: boolean): void {
    if (generated) this.#tokensFlowing = true;
    if (this.#tokensFlowing) this.#armIdle();
  }

  /**
   * While the consumer holds a part the socket is not read, so a slow consumer must not be
   * blamed on the upstream: the idle clock stops here and restarts in `resume`.
   */
  pause(): void {
    if (this.#tokensFlowing) clearTimeout(this.#phase);
  }

  resume(): void {
    if (this.#tokensFlowing) this.#armIdle();
  }

  clear(): void {
    clearTimeout(this.#phase);
    clearTimeout(this.#total);
  }

  #armIdle(): void {
    if (this.#expired) return;
    const { idleMs } = this.timeouts;
    clearTimeout(this.#phase);
    this.#phase = setTimeout(() => this.#expire(new UpstreamIdleTimeoutError(idleMs)), idleMs);
  }

  #expire(error: UpstreamError): void {
    if (this.#expired) return;
    this.#expired = true;
    this.clear();
    this.onExpire(error);
  }
}
