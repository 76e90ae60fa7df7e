import type { Dispatcher } from 'undici';
import type { EventSourceMessage } from 'eventsource-parser';
import { ClientAbortedError, UpstreamProtocolError, type UpstreamError } from '../core/errors.ts';
import { ChatChunkDecoder, isGenerationPart } from './chat-chunk-decoder.ts';
import { deferDrain, requestDispatched, type DeferredDrain } from './first-token-first.ts';
import { SseEventDecoder } from './sse-event-decoder.ts';
import { StreamDeadlines } from './stream-deadlines.ts';
import { abortReason, toUpstreamError } from './upstream-failure.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import { MAX_ERROR_BODY_BYTES, upstreamResponseError } from './upstream-response-error.ts';
import { upstreamTarget } from './upstream-target.ts';

/** One chat completion being pushed, part by part, into its consumer. */
export interface UpstreamStream {
  /**
   * Settles once the stream is over: resolves after the `end` part was delivered; rejects with a
   * typed `Upstream*Error`, with the caller's abort reason, or with what `onPart` threw.
   */
  readonly done: Promise<void>;
  /** Cut short by an abort (the caller's signal, `abort`, or a deadline): no part follows. */
  readonly interrupted: boolean;
  /** Cuts the decode short: the upstream socket closes at once and `done` rejects with `reason`. */
  abort(reason: unknown): void;
  /** Flow control for a consumer that cannot take parts now: the socket is not read and the idle clock stops. */
  pause(): void;
  resume(): void;
}

/** Starts one stream with options validated already (`pumpChatCompletion`, `streamChatCompletion`). */
export function startUpstreamStream(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void): UpstreamStream {
  const stream = new PumpedStream(options, onPart);
  stream.start();
  return stream;
}

/**
 * The stream and its undici dispatch handler in one object. undici's classic handler interface
 * (onConnect … onError) is the one every undici version calls directly, Node's bundled copy
 * included; the controller-style interface goes through a wrapper per call.
 */
class PumpedStream implements UpstreamStream, Dispatcher.DispatchHandler, DeferredDrain {
  private readonly options: ResolvedStreamOptions;
  private readonly onPart: (part: UpstreamPart) => void;
  readonly done: Promise<void>;
  interrupted = false;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  #settled = false;
  /** undici's request finished (completed or errored): nothing left to abort. */
  #requestOver = false;
  #abortRequest: ((err?: Error) => void) | undefined;
  #resumeRequest: (() => void) | undefined;
  #abortBeforeConnect: Error | undefined;
  #paused = false;
  /**
   * Events that arrived while the consumer had paused, or deferred (first-token-first.ts), in
   * order; a string is a token event's content, read from the bytes (token-event-bytes.ts).
   */
  #pending: (EventSourceMessage | string)[] = [];
  /**
   * Reads that came once the stream was generating, not yet fed to the SSE decoder: a later
   * token's bytes wait for first-token-first's pass undecoded, so the I/O phase that also reads
   * other streams' first tokens and new requests spends only undici's own work on them.
   */
  #pendingBytes: Buffer[] = [];
  /** #drain is feeding held bytes: the events they give join #pending without another pass. */
  #feeding = false;
  /** A generation part has gone out: later events wait for the end of the I/O phase. */
  #generating = false;
  /** In first-token-first's queue. */
  #deferred = false;
  /** Tells first-token-first that undici has written the request (or it never will). */
  #written: (() => void) | undefined;
  #endOfBody = false;
  #sawDone = false;
  #errorStatus = 0;
  #errorChunks: Buffer[] = [];
  #errorBytes = 0;
  #expired: UpstreamError | undefined;
  // Built when an event stream starts (onHeaders): the request goes out without waiting for them.
  #decoder: ChatChunkDecoder | undefined;
  #sse: SseEventDecoder | undefined;
  readonly #deadlines: StreamDeadlines;

  constructor(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void) {
    this.options = options;
    this.onPart = onPart;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#deadlines = new StreamDeadlines(options.timeouts, (error) => {
      this.#expired = error;
      this.#fail(error);
    });
  }

  start(): void {
    const { signal, timeouts } = this.options;
    if (signal.aborted) {
      this.interrupted = true;
      this.#settle(abortReason(signal));
      return;
    }
    // STYLE 6: the caller's one signal reaches the socket.
    signal.addEventListener('abort', this.#onSignalAbort, { once: true });
    try {
      const target = upstreamTarget(this.options, '/chat/completions');
      const body = {
        ...this.options.body,
        stream: true,
        stream_options: { ...this.options.body.stream_options, include_usage: true },
      };
      this.#deadlines.start();
      // Before dispatch: undici may write (onConnect) inside it, on a socket not used before.
      this.#written = requestDispatched();
      target.dispatcher.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: { ...target.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify(body),
          headersTimeout: timeouts.headersMs,
          // Token-phase timing is ours (first token vs idle, keep-alives excluded); undici's own
          // body timeout would count comment bytes as progress.
          bodyTimeout: 0,
        },
        this,
      );
    } catch (error) {
      this.#fail(error);
    }
  }

  abort(reason: unknown): void {
    if (this.#settled) return;
    this.interrupted = true;
    this.#settle(reason);
  }

  pause(): void {
    if (this.#paused || this.#settled) return;
    this.#paused = true;
    this.#deadlines.pause();
  }

  resume(): void {
    if (!this.#paused || this.#settled) return;
    this.#paused = false;
    this.#drain();
    if (this.#paused || this.#settled) return;
    this.#deadlines.resume();
    if (this.#endOfBody) this.#finish();
    else this.#resumeRequest?.();
  }

  // ---- undici's handler interface ----

  onConnect(abort: (err?: Error) => void): void {
    this.#written?.();
    if (this.#settled) return abort(this.#abortBeforeConnect ?? new ClientAbortedError());
    this.#abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (this.#settled) return false;
    if (statusCode < 200) return true;
    this.#resumeRequest = resume;
    if (statusCode > 299) {
      this.#errorStatus = statusCode;
      return true;
    }
    const contentType = headerValue(rawHeaders, 'content-type');
    if (!contentType.toLowerCase().includes('text/event-stream')) {
      this.#fail(new UpstreamProtocolError(`upstream answered ${contentType || 'no content type'}, not text/event-stream`));
      return false;
    }
    this.#decoder = new ChatChunkDecoder(this.options.body.model);
    this.#sse = new SseEventDecoder(this.#onEvent);
    if (this.options.onAccepted) {
      try {
        this.options.onAccepted({ baseUrl: this.options.baseUrl });
      } catch (error) {
        this.#settle(error);
        return false;
      }
    }
    return !this.#paused && !this.#settled;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    if (this.#errorStatus !== 0) {
      this.#errorChunks.push(chunk);
      this.#errorBytes += chunk.byteLength;
      if (this.#errorBytes >= MAX_ERROR_BODY_BYTES) this.#fail(upstreamResponseError(this.#errorStatus, this.#errorChunks));
      return !this.#settled;
    }
    if (this.#generating) {
      this.#pendingBytes.push(chunk);
      this.#deferIfFlowing();
      return !this.#paused;
    }
    try {
      this.#sse!.feed(chunk);
    } catch (error) {
      this.#fail(error);
    }
    return !this.#settled && !this.#paused;
  }

  onComplete(): void {
    this.#requestOver = true;
    if (this.#settled) return;
    if (this.#errorStatus !== 0) return this.#fail(upstreamResponseError(this.#errorStatus, this.#errorChunks));
    this.#endOfBody = true;
    // Behind held bytes, the SSE decoder's end comes after them (#decodeHeld).
    if (this.#pendingBytes.length > 0) return;
    try {
      this.#sse!.end();
    } catch (error) {
      return this.#fail(error);
    }
    if (!this.#paused && this.#pending.length === 0) this.#finish();
  }

  onError(error: Error): void {
    this.#requestOver = true;
    this.#fail(error);
  }

  // ---- the stream ----

  readonly #onSignalAbort = (): void => {
    this.interrupted = true;
    this.#settle(abortReason(this.options.signal));
  };

  readonly #onEvent = (event: EventSourceMessage): void => {
    if (this.#settled) return;
    if (this.#paused || this.#pending.length > 0 || this.#generating) {
      this.#pending.push(event);
      if (!this.#feeding) this.#deferIfFlowing();
    } else this.#handleEvent(event);
  };

  #deferIfFlowing(): void {
    if (this.#paused || this.#deferred) return;
    this.#deferred = true;
    deferDrain(this);
  }

  /** first-token-first's pass: what was deferred goes out now, and the end if it was held behind it. Never throws. */
  drainDeferred(): void {
    this.#deferred = false;
    if (this.#paused || this.#settled) return;
    this.#drain();
    if (!this.#paused && !this.#settled && this.#pending.length === 0 && this.#pendingBytes.length === 0 && this.#endOfBody) this.#finish();
  }

  #handleEvent(event: EventSourceMessage | string): void {
    // Whatever follows [DONE] is read and dropped, so the socket ends cleanly and goes back to
    // the keep-alive pool instead of being destroyed.
    if (this.#sawDone) return;
    let parts: UpstreamPart[];
    if (typeof event === 'string') parts = event === '' ? [] : [{ type: 'content', text: event }];
    else if (event.data === '[DONE]') {
      this.#sawDone = true;
      return;
    } else parts = this.#decoder!.decode(event.data, event.event);
    const generation = parts.some(isGenerationPart);
    this.#deadlines.chunkArrived(generation);
    if (generation) this.#generating = true;
    for (const part of parts) {
      // Parts already decoded from one read must not outlive an abort or expiry.
      if (this.#settled) return;
      this.#deliver(part);
    }
  }

  /** What `onPart` throws is the consumer's own failure: it ends the stream unchanged. */
  #deliver(part: UpstreamPart): void {
    try {
      this.onPart(part);
    } catch (error) {
      this.#settle(error);
    }
  }

  /**
   * Hands over the events held back (paused, or deferred by first-token-first), until the
   * consumer pauses again. Several at once go through the consumer's `batchDelivery`.
   */
  #drain(): void {
    if (this.#pendingBytes.length > 0 && !this.#decodeHeld()) return;
    const batch = this.options.batchDelivery;
    if (this.#pending.length < 2 || !batch) return this.#drainEach();
    try {
      batch(this.#drainEach);
    } catch (error) {
      this.#fail(error);
    }
  }

  /**
   * Feeds the held reads to the SSE decoder, then its end if the body ended meanwhile (onComplete
   * left it for here); false when that failed the stream.
   */
  #decodeHeld(): boolean {
    const bytes = this.#pendingBytes;
    this.#pendingBytes = [];
    this.#feeding = true;
    try {
      for (const chunk of bytes) {
        // Most reads of a generating vLLM stream are whole token events: read from the bytes.
        const texts = this.#sse!.atEventBoundary ? this.#decoder!.tokenTexts(chunk) : undefined;
        if (texts === undefined) this.#sse!.feed(chunk);
        else for (const text of texts) this.#pending.push(text);
      }
      if (this.#endOfBody) this.#sse!.end();
    } catch (error) {
      this.#fail(error);
      return false;
    } finally {
      this.#feeding = false;
    }
    return true;
  }

  readonly #drainEach = (): void => {
    let i = 0;
    try {
      while (i < this.#pending.length && !this.#paused && !this.#settled) this.#handleEvent(this.#pending[i++]!);
    } catch (error) {
      this.#fail(error);
    }
    this.#pending.splice(0, i);
  };

  #finish(): void {
    if (this.#settled) return;
    if (!this.#decoder?.started) {
      this.#settle(new UpstreamProtocolError('upstream ended the stream without sending any chunk'));
      return;
    }
    this.#deliver({ type: 'end' });
    this.#settle();
  }

  /** A failure of the upstream, the network or the decoding. */
  #fail(error: unknown): void {
    if (this.#settled) return;
    const { signal, baseUrl, timeouts } = this.options;
    if (signal.aborted) {
      this.interrupted = true;
      return this.#settle(abortReason(signal));
    }
    // After [DONE] the answer is complete; a server that then stalls or resets costs only the socket.
    if (this.#sawDone) {
      this.#endOfBody = true;
      this.#pending.length = 0;
      this.#pendingBytes.length = 0;
      this.#closeRequest();
      return this.#finish();
    }
    if (this.#expired) this.interrupted = true;
    this.#settle(this.#expired ?? toUpstreamError(error, { baseUrl, timeouts }));
  }

  /** Ends the stream: resolves without `reason`, rejects with it. */
  #settle(...outcome: [] | [reason: unknown]): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#written?.();
    this.#pending.length = 0;
    this.#pendingBytes.length = 0;
    this.#deadlines.clear();
    this.options.signal.removeEventListener('abort', this.#onSignalAbort);
    this.#closeRequest();
    if (outcome.length === 0) this.#resolve();
    else this.#reject(outcome[0]);
  }

  /**
   * An unfinished response cannot be reused: aborting makes undici destroy the socket, which is
   * how the server learns it should stop decoding.
   */
  #closeRequest(): void {
    if (this.#requestOver) return;
    this.#requestOver = true;
    const reason = new ClientAbortedError();
    if (this.#abortRequest) this.#abortRequest(reason);
    else this.#abortBeforeConnect = reason;
  }
}

/** A response header from undici's raw list (name, value, …); repeated headers joined by commas. */
function headerValue(raw: Buffer[] | string[] | null, name: string): string {
  let value: string | undefined;
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) continue;
    value = value === undefined ? String(raw[i + 1]) : `${value},${String(raw[i + 1])}`;
  }
  return value ?? '';
}
