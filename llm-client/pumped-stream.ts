import type { EventSourceMessage } from 'eventsource-parser';
import { UpstreamTotalTimeoutError, type UpstreamError } from '../core/errors.ts';
import { AnswerTail } from './answer-tail.ts';
import { ChatChunkDecoder, isGenerationPart } from './chat-chunk-decoder.ts';
import { chatEventParts } from './chat-event-parts.ts';
import { chatCompletionRequest } from './chat-completion-request.ts';
import { DispatchedRequest } from './dispatched-request.ts';
import { ErrorAnswer } from './error-answer.ts';
import { deferDrain, type DeferredDrain } from './first-token-first.ts';
import { HeldEvents, type HeldEvent } from './held-events.ts';
import { PartDelivery } from './part-delivery.ts';
import { SseEventDecoder } from './sse-event-decoder.ts';
import { StreamDeadlines, type DeadlineStarts } from './stream-deadlines.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import { ERROR_BODY_WAIT_MS } from './upstream-response-error.ts';
import type { UpstreamStream } from './upstream-stream.ts';

/**
 * One chat completion's answer, decoded into parts and pushed into `onPart` as it is read; the
 * request under it, undici's abort and the settling are DispatchedRequest's.
 */
export class PumpedStream extends DispatchedRequest<ResolvedStreamOptions> implements UpstreamStream, DeferredDrain {
  readonly #delivery: PartDelivery;
  /** The upstream sent a status line: whatever failed after that, the request reached a server that answered it. */
  responded = false;
  #resumeRequest: (() => void) | undefined;
  #paused = false;
  readonly #held = new HeldEvents();
  /** A generation part has gone out: later events wait for the end of the I/O phase. */
  #generating = false;
  /** In first-token-first's queue. */
  #deferred = false;
  #endOfBody = false;
  readonly #tail = new AnswerTail(() => this.#endWhole(), () => !this.#held.isEmpty);
  /** A non-2xx answer, or a 2xx that is not an event stream: its body is read for what it says. */
  #errorAnswer: ErrorAnswer | undefined;
  #expired: UpstreamError | undefined;
  /** The connection failed behind reads or events not yet handed over: they go first, then this. */
  #failedBehind: { error: unknown } | undefined;
  // Built when an event stream starts (onHeaders): the request goes out without waiting for them.
  #decoder: ChatChunkDecoder | undefined;
  #sse: SseEventDecoder | undefined;
  readonly #deadlines: StreamDeadlines;

  constructor(options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void) {
    super(options);
    this.#delivery = new PartDelivery(onPart, (error) => this.settle(error));
    this.#deadlines = new StreamDeadlines(options.timeouts, (error) => {
      // An error answer's status, and what came of its body, say more than the clock that ran out.
      // But a total that ran out is the request's end: no replica is tried next with none of it left.
      if (this.#errorAnswer) {
        if (error instanceof UpstreamTotalTimeoutError) this.interrupted = true;
        return this.fail(this.#errorAnswer.error());
      }
      this.#expired = error;
      this.fail(error);
    }, () => !this.#held.isEmpty);
  }

  start(starts?: DeadlineStarts): void {
    this.send(() => {
      const request = chatCompletionRequest(this.options);
      this.#deadlines.start(starts);
      return request;
    });
  }

  pause(): void {
    if (this.#paused || this.settled) return;
    this.#paused = true;
    this.#deadlines.pause();
    this.#tail.pause();
  }

  resume(): void {
    if (!this.#paused || this.settled) return;
    // From inside onPart: a consumer that paused and found it need not.
    if (this.#delivery.resumeLater(() => this.resume())) return;
    this.#paused = false;
    this.#drain();
    if (this.#paused || this.settled) return;
    if (this.#failedBehind) return this.fail(this.#failedBehind.error);
    this.#deadlines.resume();
    this.#tail.resume();
    if (this.#endOfBody) this.#finish();
    else this.#resumeRequest?.();
  }

  // ---- undici's handler interface (onConnect, onComplete and onError are DispatchedRequest's) ----

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null, resume: () => void): boolean {
    if (this.settled) return false;
    if (statusCode < 200) return true;
    this.responded = true;
    this.#resumeRequest = resume;
    this.#errorAnswer = ErrorAnswer.of(statusCode, rawHeaders);
    if (this.#errorAnswer) {
      this.#deadlines.bodyDue(ERROR_BODY_WAIT_MS);
      return true;
    }
    this.#decoder = new ChatChunkDecoder(this.options.body.model);
    this.#sse = new SseEventDecoder(this.#onEvent);
    if (this.options.onAccepted) {
      try {
        this.options.onAccepted({ baseUrl: this.options.baseUrl });
      } catch (error) {
        this.settle(error);
        return false;
      }
    }
    return !this.#paused && !this.settled;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return false;
    if (this.#errorAnswer) {
      if (this.#errorAnswer.add(chunk)) this.fail(this.#errorAnswer.error());
      return !this.settled;
    }
    if (this.#generating) {
      this.#held.holdRead(chunk);
      this.#deferIfFlowing();
      return !this.#paused;
    }
    try {
      this.#sse!.feed(chunk);
    } catch (error) {
      this.fail(error);
    }
    return !this.settled && !this.#paused;
  }

  protected complete(): void {
    if (this.#errorAnswer) return this.fail(this.#errorAnswer.error());
    this.#endOfBody = true;
    // Behind held reads, the SSE decoder's end comes after them (#drain).
    if (this.#held.hasReads) return;
    try {
      this.#sse!.end();
    } catch (error) {
      return this.fail(error);
    }
    if (!this.#paused && this.#held.events.length === 0) this.#finish();
  }

  // ---- the stream ----

  readonly #onEvent = (event: EventSourceMessage): void => {
    if (this.settled) return;
    const held = this.#held;
    if (this.#paused || held.events.length > 0 || this.#generating) {
      held.events.push(event);
      if (!held.decoding) this.#deferIfFlowing();
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
    if (this.#paused || this.settled) return;
    this.#drain();
    if (this.#paused || this.settled || !this.#held.isEmpty) return;
    if (this.#failedBehind) this.fail(this.#failedBehind.error);
    else if (this.#endOfBody) this.#finish();
  }

  #handleEvent(event: HeldEvent): void {
    const parts = chatEventParts(event, this.#decoder!, this.#tail);
    // A keep-alive proves the socket alive, not the model's progress: no tick of the first-token or idle timer.
    if (parts === undefined) return;
    const generation = parts.some(isGenerationPart);
    this.#deadlines.chunkArrived(generation);
    if (generation) this.#generating = true;
    for (const part of parts) {
      // Parts already decoded from one read must not outlive an abort or expiry.
      if (this.settled) return;
      this.#deliver(part);
    }
    if (this.settled) return;
    if (this.#tail.finished) this.#deadlines.generationOver();
    this.#tail.chunkHandled();
  }

  #deliver(part: UpstreamPart): void {
    this.#tail.delivered(part);
    this.#delivery.deliver(part);
  }

  /**
   * Hands over the events held back (paused, or deferred by first-token-first), until the
   * consumer pauses again; held reads are decoded first, and the SSE decoder's end after them if
   * the body ended meanwhile (complete() left it for here). Several events at once go through the
   * consumer's `batchDelivery`.
   */
  #drain(): void {
    const held = this.#held;
    if (held.hasReads) {
      try {
        held.decodeReads(this.#sse!, this.#decoder!, this.#endOfBody);
      } catch (error) {
        return this.fail(error);
      }
    }
    const batch = this.options.batchDelivery;
    if (held.events.length < 2 || !batch) return this.#drainEach();
    try {
      batch(this.#drainEach);
    } catch (error) {
      this.fail(error);
    }
  }

  readonly #drainEach = (): void => {
    const events = this.#held.events;
    let i = 0;
    try {
      while (i < events.length && !this.#paused && !this.settled) this.#handleEvent(events[i++]!);
    } catch (error) {
      this.fail(error);
    }
    events.splice(0, i);
  };

  #finish(): void {
    if (this.settled) return;
    const fault = this.#tail.endFault(this.#decoder?.started ?? false);
    if (fault) return this.settle(fault);
    this.#deliver({ type: 'end' });
    this.settle();
  }

  /**
   * The answer ends as it stands (answer-tail.ts): the rest of the response is not read, and
   * closing the request destroys its socket rather than pool it half read.
   */
  #endWhole(): void {
    if (this.settled) return;
    this.#endOfBody = true;
    this.#held.clear();
    this.closeRequest();
    // A paused consumer gets the end when it resumes, as when the body ends during a pause.
    if (!this.#paused) this.#finish();
  }

  /**
   * A generating stream's reads wait for first-token-first's pass, which a busy process runs a turn
   * or more later (a paused consumer's wait longer): a reset or a close read before it would throw
   * away what came before it, the finish_reason of a whole answer among it. That goes first
   * (drainDeferred, resume), then the failure, which `fail` reads against it.
   */
  protected override connectionFailed(error: unknown): void {
    if (this.settled || this.#held.isEmpty || this.options.signal.aborted) return this.fail(error);
    this.#failedBehind = { error };
    this.#deferIfFlowing();
  }

  protected override fail(error: unknown): void {
    // The caller's abort wins over everything below (DispatchedRequest's fail answers it).
    if (this.settled || this.options.signal.aborted) return super.fail(error);
    // A whole answer is complete; a server that then stalls or resets costs only the socket. So
    // does one that resets after the finish, before the usage chunk: the model's answer is all
    // there, and it ends without usage, as after a silence (answer-tail.ts), unless what the
    // consumer has still to take (a pause) may hold that usage. totalMs running out there is no
    // different: failing would throw away an answer whose every token was handed on.
    if (this.#tail.whole || (this.#tail.finished && this.#held.isEmpty)) return this.#endWhole();
    if (this.#expired) this.interrupted = true;
    super.fail(this.#expired ?? error);
  }

  protected release(): void {
    this.#held.clear();
    this.#deadlines.clear();
    this.#tail.clear();
  }
}
