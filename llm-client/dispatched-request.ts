import type { Dispatcher } from 'undici';
import { ClientAbortedError } from '../core/errors.ts';
import { requestDispatched } from './first-token-first.ts';
import { awaitSocket, type SocketReuse } from './reused-sockets.ts';
import { abortReason, toUpstreamError } from './upstream-failure.ts';
import type { UpstreamTimeouts } from './upstream-options.ts';

/** What the request side needs of its options: the caller's signal, and what failures are worded with. */
export interface DispatchedRequestOptions {
  readonly signal: AbortSignal;
  readonly baseUrl: string;
  readonly timeouts: UpstreamTimeouts;
}

/**
 * One request handed to undici, as something that settles once (`done`): the caller's signal
 * reaches the socket, and a request that ends unfinished has its socket destroyed. What the answer
 * means is the subclass's (pumped-stream.ts): undici calls its `onHeaders` and `onData`, and
 * `complete` once the whole answer has been read.
 *
 * A base class rather than a field: the stream and its undici dispatch handler stay one object,
 * with no hop between them on every token's path. undici's classic handler interface (onConnect …
 * onError) is the one every undici version calls directly, Node's bundled copy included; the
 * controller-style interface goes through a wrapper per call.
 */
export abstract class DispatchedRequest<Options extends DispatchedRequestOptions> implements Dispatcher.DispatchHandler, SocketReuse {
  protected readonly options: Options;
  readonly done: Promise<void>;
  /** Cut short by an abort (the caller's signal, `abort`, or a deadline): no part follows. */
  interrupted = false;
  /** undici wrote the request on a socket that had carried one before (reused-sockets.ts). */
  socketReused: boolean | undefined = undefined;
  writtenAt: number | undefined = undefined;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  #settled = false;
  /** undici's request finished (completed or errored): nothing left to abort. */
  #requestOver = false;
  #abortRequest: ((err?: Error) => void) | undefined;
  #abortBeforeConnect: Error | undefined;
  /** Tells first-token-first that undici has written the request (or it never will). */
  #written: (() => void) | undefined;
  /**
   * The headers wait undici was given, which its timeout error names: a chat stream's is the
   * longer of headersMs and firstTokenMs (generationHeadersMs), not headersMs.
   */
  #headersMs: number | undefined;

  constructor(options: Options) {
    this.options = options;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  protected get settled(): boolean {
    return this.#settled;
  }

  /**
   * Hands the request that `prepare` builds to undici. What `prepare` throws fails the request
   * (an InvalidRequestError for a body JSON cannot write: `fail` passes a ConveyorError on as it is).
   */
  protected send(prepare: () => { dispatcher: Dispatcher; request: Dispatcher.DispatchOptions }): void {
    const { signal } = this.options;
    if (signal.aborted) {
      this.interrupted = true;
      this.settle(abortReason(signal));
      return;
    }
    // STYLE 6: the caller's one signal reaches the socket.
    signal.addEventListener('abort', this.#onSignalAbort, { once: true });
    try {
      const { dispatcher, request } = prepare();
      this.#headersMs = request.headersTimeout ?? undefined;
      // Before dispatch: undici may write (onConnect) inside it, on a socket not used before.
      this.#written = requestDispatched();
      dispatcher.dispatch(request, this);
    } catch (error) {
      this.fail(error);
    }
  }

  abort(reason: unknown): void {
    if (this.#settled) return;
    this.interrupted = true;
    this.settle(reason);
  }

  // ---- undici's handler interface (onHeaders and onData are the subclass's) ----

  onConnect(abort: (err?: Error) => void): void {
    this.#written?.();
    if (this.#settled) return abort(this.#abortBeforeConnect ?? new ClientAbortedError());
    this.#abortRequest = abort;
    awaitSocket(this);
  }

  onComplete(): void {
    this.#requestOver = true;
    if (!this.#settled) this.complete();
  }

  onError(error: Error): void {
    this.#requestOver = true;
    this.connectionFailed(error);
  }

  // ---- the request's end ----

  /** undici has read the whole answer, and the request has not settled yet. */
  protected abstract complete(): void;

  /** Lets go of what the subclass holds (buffers, timers); called once, as the request settles. */
  protected abstract release(): void;

  readonly #onSignalAbort = (): void => {
    this.interrupted = true;
    this.settle(abortReason(this.options.signal));
  };

  /** undici's request failed (the connection, a timeout of undici's): nothing more will be read. */
  protected connectionFailed(error: unknown): void {
    this.fail(error);
  }

  /** A failure of the upstream, the network or the decoding. */
  protected fail(error: unknown): void {
    if (this.#settled) return;
    const { signal, baseUrl, timeouts } = this.options;
    if (signal.aborted) {
      this.interrupted = true;
      return this.settle(abortReason(signal));
    }
    const waited = this.#headersMs === undefined ? timeouts : { ...timeouts, headersMs: this.#headersMs };
    this.settle(toUpstreamError(error, { baseUrl, timeouts: waited }));
  }

  /** Ends the request: resolves without `reason`, rejects with it. */
  protected settle(...outcome: [] | [reason: unknown]): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#written?.();
    this.release();
    this.options.signal.removeEventListener('abort', this.#onSignalAbort);
    this.closeRequest();
    if (outcome.length === 0) this.#resolve();
    else this.#reject(outcome[0]);
  }

  /**
   * An unfinished response cannot be reused: aborting makes undici destroy the socket, which is
   * how the server learns it should stop decoding.
   */
  protected closeRequest(): void {
    if (this.#requestOver) return;
    this.#requestOver = true;
    const reason = new ClientAbortedError();
    if (this.#abortRequest) this.#abortRequest(reason);
    else this.#abortBeforeConnect = reason;
  }
}
