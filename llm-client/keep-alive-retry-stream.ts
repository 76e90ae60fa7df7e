import { performance } from 'node:perf_hooks';
import { PumpedStream } from './pumped-stream.ts';
import type { DeadlineStarts } from './stream-deadlines.ts';
import { isStaleConnectionFailure } from './upstream-failure.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import type { UpstreamStream } from './upstream-stream.ts';

/**
 * One attempt on one upstream, sent once more when its pooled keep-alive socket turns out to be
 * closed already (`isStaleConnectionFailure`: before any status line, within a second of writing
 * the request). A server closes an idle connection on its own clock (uvicorn, under vLLM and
 * SGLang, after 5 s; a proxy in between on its own), and a request written while that close is on
 * its way fails in undici, which does not replay a request it has written. Only the pooled socket
 * was stale: failing the request for it, or resting a healthy replica, would be wrong. Never after
 * a failure on a new connection: that server crashed on accept or drops its requests, and sending
 * it the request again only doubled its load and the caller's wait (a regression). Once only: a
 * server that drops the request on the new connection too is failing for real, and the caller
 * counts that.
 *
 * Sending a chat request twice repeats no side effect, and failover sends it again anyway. The
 * retry runs on the attempt's clocks (`DeadlineStarts`): it gets what is left of them, not a new wait.
 */
export class KeepAliveRetryStream implements UpstreamStream {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  #current!: PumpedStream;
  #retried = false;
  #aborted = false;
  #abortReason: unknown;
  #paused = false;
  readonly #starts: DeadlineStarts;

  private readonly options: ResolvedStreamOptions;
  private readonly onPart: (part: UpstreamPart) => void;

  constructor(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void, requestStartedAt?: number) {
    this.options = options;
    this.onPart = onPart;
    const now = performance.now();
    this.#starts = { attempt: now, request: requestStartedAt ?? now };
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get interrupted(): boolean {
    return this.#current.interrupted;
  }

  start(): void {
    const stream = new PumpedStream(this.options, this.onPart);
    this.#current = stream;
    stream.start(this.#starts);
    if (this.#paused) stream.pause();
    stream.done.then(this.#resolve, (error: unknown) => this.#failed(stream, error));
  }

  abort(reason: unknown): void {
    // Also stops a retry that the failure has already queued.
    this.#aborted = true;
    this.#abortReason = reason;
    this.#current.abort(reason);
  }

  pause(): void {
    this.#paused = true;
    this.#current.pause();
  }

  resume(): void {
    this.#paused = false;
    this.#current.resume();
  }

  #failed(stream: PumpedStream, error: unknown): void {
    if (this.#aborted) return this.#reject(this.#abortReason);
    const retry =
      !this.#retried && !stream.responded && !stream.interrupted && !this.options.signal.aborted && isStaleConnectionFailure(error, stream);
    if (!retry) return this.#reject(error);
    this.#retried = true;
    this.start();
  }
}
