import type { UpstreamPart } from './upstream-parts.ts';

/**
 * The calls into one stream's consumer (`onPart`), and what may happen inside them: a consumer
 * that pauses and resumes from inside onPart must not have the stream resumed in place.
 */
export class PartDelivery {
  readonly #onPart: (part: UpstreamPart) => void;
  readonly #onThrow: (error: unknown) => void;
  /** onPart calls under way. */
  #delivering = 0;
  #resumeQueued = false;

  /** What `onPart` throws is the consumer's own failure: `onThrow` ends the stream with it unchanged. */
  constructor(onPart: (part: UpstreamPart) => void, onThrow: (error: unknown) => void) {
    this.#onPart = onPart;
    this.#onThrow = onThrow;
  }

  deliver(part: UpstreamPart): void {
    this.#delivering += 1;
    try {
      this.#onPart(part);
    } catch (error) {
      this.#onThrow(error);
    } finally {
      this.#delivering -= 1;
    }
  }

  /**
   * Whether a resume must wait: called from inside onPart, the delivery under way finishes first,
   * and `resume` runs once after it (a microtask). Resumed in place, a nested drain handed the part
   * being delivered over again, from the start of the held events the outer one had not yet let go of.
   */
  resumeLater(resume: () => void): boolean {
    if (this.#delivering === 0) return false;
    if (!this.#resumeQueued) {
      this.#resumeQueued = true;
      queueMicrotask(() => {
        this.#resumeQueued = false;
        resume();
      });
    }
    return true;
  }
}
