import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { ClientAbortedError } from '../core/errors.ts';
import { deferDrain, requestDispatched, type DeferredDrain } from './first-token-first.ts';
import { rawHeaderRecord } from './raw-headers.ts';
import { awaitSocket, type SocketReuse } from './reused-sockets.ts';
import { abortReason, isStaleConnectionFailure, toUpstreamError } from './upstream-failure.ts';
import {
  generationHeadersMs,
  ListModelsOptionsSchema,
  parseUpstreamOptions,
  type ListModelsOptions,
  type ResolvedListModelsOptions,
} from './upstream-options.ts';
import { upstreamTarget } from './upstream-target.ts';

/** One request to pass to the upstream as it is: any method, any endpoint below the base URL. */
export interface ForwardedRequest {
  method: string;
  /** The path below the base URL, e.g. `/completions` for `{baseUrl}/completions`. */
  endpoint: string;
  /**
   * `endpoint` is beside the base URL's `/v1`, at the server root (vLLM's and llama.cpp's
   * `/tokenize`, `/detokenize`): the base URL must end in `/v1` (serverRootPath).
   */
  besideV1?: boolean;
  /** The query string without its `?`; '' for none. */
  query: string;
  /** End-to-end headers only: the caller has dropped hop-by-hop ones, `host` and the client's `authorization`. */
  headers: Record<string, string | string[]>;
  body: Readable | Buffer | null;
  /** Cancels the request at any point: the upstream socket is destroyed, which stops its decode. */
  signal: AbortSignal;
  /**
   * The answer comes whole, its headers with it (a JSON body without `stream: true`): the upstream
   * generates all of it first, so its headers may wait WHOLE_ANSWER_HEADERS_MS, not a stream's
   * first-token wait.
   */
  answersWhole?: boolean;
}

/**
 * How long a request whose answer comes whole may wait for its headers (at least a stream's
 * wait): the OpenAI SDKs' own request timeout, 10 minutes. A long non-streamed completion is a
 * request like any other, not an upstream that failed (and rests).
 */
export const WHOLE_ANSWER_HEADERS_MS = 600_000;

/** Where the answer goes, as it arrives. */
export interface ForwardSink {
  /** The upstream's status and headers (names lower-cased; a repeated header as a list). */
  head(statusCode: number, headers: Record<string, string | string[]>): void;
  /** One read of the body, in order; false asks for no more until the exchange's `resume()`. */
  body(chunk: Buffer): boolean;
}

export interface ForwardedExchange {
  /**
   * Resolves once the whole answer has gone to the sink. Rejects with a typed `Upstream*Error`
   * (a network failure or timeout: before `head`, nothing reached the sink), with the signal's
   * reason, with what the sink threw, or with a `ShuttingDownError` when the connection pools
   * were closed under it (`closeUpstreamPools`).
   */
  readonly done: Promise<void>;
  /** The sink can take more after its `body` returned false. */
  resume(): void;
}

// Held later reads above this many bytes stop the socket reads until the pass has written them.
const HELD_BYTES_LIMIT = 256 * 1024;

/**
 * Sends one request upstream unchanged but for the upstream's own key, and hands its answer,
 * whatever the status, to `sink` as it arrives: the bytes are not parsed. Connect and headers
 * timeouts are a chat stream's (generationHeadersMs; longer for an answer that comes whole,
 * `answersWhole`); between body reads it allows the longer of
 * `firstTokenMs` and `idleMs`, since an upstream may send its headers before a long prefill.
 *
 * It is undici's dispatch handler itself, as the chat stream is (pumped-stream.ts), and its
 * reads after the first go out in first-token-first's passes, so a forwarded stream costs the
 * process about what a chat stream does and does not hold up other streams' first tokens.
 */
export function forwardRequest(connection: ForwardConnection, request: ForwardedRequest, sink: ForwardSink): ForwardedExchange {
  let exchange = new ForwardHandler(connection, request, sink);
  exchange.start();
  // A pooled keep-alive socket the server had closed already: sent once more on a new connection,
  // as a chat stream is (keep-alive-retry-stream.ts), when the body can be sent again.
  const replayable = request.body === null || Buffer.isBuffer(request.body);
  const done = exchange.done.catch((error: unknown) => {
    if (!replayable || exchange.responded || request.signal.aborted || !isStaleConnectionFailure(error, exchange)) throw error;
    exchange = new ForwardHandler(connection, request, sink);
    exchange.start();
    return exchange.done;
  });
  return { done, resume: () => exchange.resume() };
}

/** An upstream's connection options, checked once (the URL's check costs more than a forwarded request's own work). */
export type ForwardConnection = ResolvedListModelsOptions & { readonly checked: true };

export function forwardConnection(options: ListModelsOptions): ForwardConnection {
  return { ...parseUpstreamOptions(ListModelsOptionsSchema, options), checked: true };
}

class ForwardHandler implements ForwardedExchange, Dispatcher.DispatchHandler, DeferredDrain, SocketReuse {
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

  constructor(options: ResolvedListModelsOptions, request: ForwardedRequest, sink: ForwardSink) {
    this.#options = options;
    this.#request = request;
    this.#sink = sink;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  start(): void {
    const { signal } = this.#request;
    if (signal.aborted) return this.#settle(abortReason(signal));
    signal.addEventListener('abort', this.#onAbort, { once: true });
    const { request, options } = this.#dispatchOptions();
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
