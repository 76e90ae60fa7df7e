import type { Dispatcher } from 'undici';
import { ClientAbortedError } from '../core/errors.ts';
import { deferDrain, requestDispatched, type DeferredDrain } from './first-token-first.ts';
import type { ForwardedExchange, ForwardedRequest, ForwardSink } from './forward-request.ts';
import { rawHeaderRecord } from './raw-headers.ts';
import { awaitSocket, type SocketReuse } from './reused-sockets.ts';
import { StreamDeadlines } from './stream-deadlines.ts';
import { abortReason, toUpstreamError } from './upstream-failure.ts';
import { generationHeadersMs, type ResolvedListModelsOptions } from './upstream-options.ts';
import { upstreamTarget } from './upstream-target.ts';

/**
 * How long a request whose answer comes whole may wait for its headers (at least a stream's
 * wait): the OpenAI SDKs' own request timeout, 10 minutes. A long non-streamed completion is a
 * request like any other, not an upstream that failed (and rests).
 */
export const WHOLE_ANSWER_HEADERS_MS = 600_000;

// Held later reads above this many bytes stop the socket reads until the pass has written them.
const HELD_BYTES_LIMIT = 256 * 1024;

/**
 * One forwarded request's exchange with undici: it dispatches the request, hands the answer's head
 * and reads to the sink (later reads in first-token-first's passes), and settles `done`.
 */
export class ForwardHandler implements ForwardedExchange, Dispatcher.DispatchHandler, DeferredDrain, SocketReuse {
  readonly done: Promise<void>;
  /** The upstream sent a status line. */
  responded = false;
  socketReused: boolean | undefined = undefined;
  writtenAt: number | undefined = undefined;
  readonly #options: ResolvedListModelsOptions;
  readonly #request: ForwardedRequest;
  readonly #sink: ForwardSink;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  #settled = false;
  #abortRequest: ((err?: Error) => void) | undefined;
  #resumeReading: (() => void) | undefined;
  #written: (() => void) | undefined;
  /** Reads after the first, waiting for first-token-first's pass. */
  #held: Buffer[] = [];
  #heldBytes = 0;
  #flowing = false;
  #deferred = false;
  /** The sink asked for a pause. */
  #paused = false;
  /** onData answered false: undici waits for #resumeReading. */
  #readingStopped = false;
  #ended = false;
  /** The request failed behind reads not yet written: they go first (#writeHeld), then this. */
  #failedBehind: { error: unknown } | undefined;
  /** `totalMs` only: undici's own timeouts time the other phases. */
  readonly #deadlines: StreamDeadlines;

  constructor(options: ResolvedListModelsOptions, request: ForwardedRequest, sink: ForwardSink) {
    this.#options = options;
    this.#request = request;
    this.#sink = sink;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Its verdict waits for the reads held for the pass, not for a paused sink's: that wait is the
    // client's, which the total bounds too (and waiting on it would spin until the client drains).
    this.#deadlines = new StreamDeadlines(options.timeouts, (error) => this.#settle(error), () => this.#held.length > 0 && !this.#paused);
  }

  start(): void {
    const { signal } = this.#request;
    if (signal.aborted) return this.#settle(abortReason(signal));
    signal.addEventListener('abort', this.#onAbort, { once: true });
    const { request, options } = this.#dispatchOptions();
    this.#deadlines.startTotalOnly(this.#request.startedAt);
    this.#written = requestDispatched();
    try {
      options.dispatcher.dispatch(request, this);
    } catch (error) {
      this.#fail(error);
    }
  }

  resume(): void {
    if (!this.#paused || this.#settled) return;
    this.#paused = false;
    this.#writeHeld();
  }

  #dispatchOptions(): { request: Dispatcher.DispatchOptions; options: { dispatcher: Dispatcher } } {
    const { timeouts } = this.#options;
    const target = upstreamTarget(this.#options, this.#request.endpoint, this.#request.query, this.#request.besideV1 === true);
    return {
      options: { dispatcher: target.dispatcher },
      request: {
        origin: target.origin,
        path: target.path,
        method: this.#request.method as Dispatcher.HttpMethod,
        headers: { ...this.#request.headers, ...target.headers },
        body: this.#request.body,
        // A forwarded completions stream from llama.cpp's server has its headers with its first
        // token, as a chat stream does (review s41: it failed, and rested the replica, at headersMs).
        headersTimeout: this.#headersMs(),
        bodyTimeout: forwardBodyTimeoutMs(timeouts),
      },
    };
  }

  // ---- undici's handler interface ----

  onConnect(abort: (err?: Error) => void): void {
    this.#written?.();
    if (this.#settled) return abort(new ClientAbortedError());
    this.#abortRequest = abort;
    awaitSocket(this);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (this.#settled) return false;
    if (statusCode < 200) return true;
    this.responded = true;
    this.#resumeReading = resume;
    try {
      this.#sink.head(statusCode, rawHeaderRecord(rawHeaders));
    } catch (error) {
      this.#settle(error);
      return false;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    if (!this.#flowing) {
      // The first read goes at once, like a chat stream's first token. A full client socket
      // pauses undici here too, and its drain must then resume the reading.
      this.#flowing = true;
      const more = this.#write(chunk);
      this.#readingStopped = !more;
      return more;
    }
    this.#held.push(chunk);
    this.#heldBytes += chunk.byteLength;
    if (!this.#paused && !this.#deferred) {
      this.#deferred = true;
      deferDrain(this);
    }
    this.#readingStopped = this.#paused || this.#heldBytes >= HELD_BYTES_LIMIT;
    return !this.#readingStopped;
  }

  onComplete(): void {
    this.#ended = true;
    if (!this.#settled && this.#held.length === 0) this.#settle();
  }

  onError(error: Error): void {
    this.#ended = true;
    // Held for the pass or a paused sink, these reads came before the failure, the last bytes of an answer the upstream then reset.
    if (this.#held.length > 0 && !this.#settled) this.#failedBehind = { error };
    else this.#fail(error);
  }

  // ---- the exchange ----

  drainDeferred(): void {
    this.#deferred = false;
    this.#writeHeld();
  }

  #writeHeld(): void {
    if (this.#settled || this.#paused) return;
    if (this.#held.length > 0) {
      // Reads that waited together leave in one write, as a chat stream's tokens do (batchDelivery).
      const held = this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held, this.#heldBytes);
      this.#held = [];
      this.#heldBytes = 0;
      this.#write(held);
    }
    if (this.#settled || this.#paused) return;
    if (this.#ended) return this.#failedBehind ? this.#fail(this.#failedBehind.error) : this.#settle();
    if (this.#readingStopped) {
      this.#readingStopped = false;
      this.#resumeReading?.();
    }
  }

  /** Hands one read to the sink; false once it asked for a pause. */
  #write(chunk: Buffer): boolean {
    try {
      if (!this.#sink.body(chunk)) this.#paused = true;
    } catch (error) {
      this.#settle(error);
      return false;
    }
    return !this.#paused;
  }

  readonly #onAbort = (): void => this.#settle(abortReason(this.#request.signal));

  #headersMs(): number {
    const stream = generationHeadersMs(this.#options.timeouts);
    return this.#request.answersWhole ? Math.max(stream, WHOLE_ANSWER_HEADERS_MS) : stream;
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    const { signal } = this.#request;
    // The waits allowed here are the timeouts above, which the error then names.
    const timeouts = { ...this.#options.timeouts, headersMs: this.#headersMs(), idleMs: forwardBodyTimeoutMs(this.#options.timeouts) };
    this.#settle(signal.aborted ? abortReason(signal) : toUpstreamError(error, { baseUrl: this.#options.baseUrl, timeouts }));
  }

  #settle(...outcome: [] | [reason: unknown]): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deadlines.clear();
    this.#written?.();
    this.#held.length = 0;
    this.#request.signal.removeEventListener('abort', this.#onAbort);
    // An answer not read to its end cannot go back to the keep-alive pool: undici destroys the socket.
    if (!this.#ended) this.#abortRequest?.(new ClientAbortedError());
    if (outcome.length === 0) this.#resolve();
    else this.#reject(outcome[0]);
  }
}

/**
 * How long a forwarded answer may be silent: undici's one body timeout stands for both the wait
 * for the first token and the gaps between tokens, so it is the longer of the two.
 */
function forwardBodyTimeoutMs(timeouts: { firstTokenMs: number; idleMs: number }): number {
  return Math.max(timeouts.firstTokenMs, timeouts.idleMs);
}
