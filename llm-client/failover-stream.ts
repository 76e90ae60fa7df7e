import { performance } from 'node:perf_hooks';
import {
  UpstreamConnectionError,
  UpstreamConnectTimeoutError,
  UpstreamFirstTokenTimeoutError,
  UpstreamHeadersTimeoutError,
  UpstreamModelNotFoundError,
  UpstreamProtocolError,
  UpstreamResponseError,
} from '../core/errors.ts';
import { isGenerationPart } from './chat-chunk-decoder.ts';
import { bareStatusMessage, UpstreamRedirectError } from './upstream-response-error.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import type { Replica, ReplicaAffinity, UpstreamReplicas } from './upstream-replicas.ts';
import { startUpstreamStream, type UpstreamStream } from './upstream-stream.ts';

/** What the classification of a failure needs to know beside the error. */
export interface ReplicaFailureContext {
  /**
   * The gateway names the model of every request (its `upstream.model`): a 404 model_not_found
   * then says that this replica does not serve it (misconfigured, or mid-rollout to another
   * model), not that the client asked for a model that does not exist.
   */
  modelNamedByGateway?: boolean;
}

/**
 * How a failed attempt counts: `rest` — the replica itself is down, drowning or broken (refused or
 * reset connection, connect or headers timeout, 502/503/504; a bare 500, with no error body, which
 * is how vLLM answers every request once its engine is dead; 401/403, a replica started with
 * another key; a 3xx, a replica whose URL is wrong; 404 model_not_found when the gateway names the model), so it rests and another one
 * is tried; `busy` — it is only full (429), or it failed this request with a 500 that says why (an
 * error body: vLLM's answer to an exception in that request's handling, which may be the
 * request's own doing and must not rest every replica it is tried on), or with an error object
 * inside its stream before any token (vLLM gives each its defaults, code 400, the request's fault
 * or not), so another one is tried but it does not rest (unless such failures pile up on streams
 * other replicas then served: UpstreamReplicas.servedElsewhere); `final` — any
 * other replica would answer the same (400 bad request, 404 for a model the client named, 422),
 * or the failure is this process's own: the caller stopped it, or the pools were closed under it
 * (`ShuttingDownError`). A stale keep-alive socket is none of these: the attempt already sent it
 * again on a new connection (keep-alive-retry-stream.ts), and what reaches here failed there too.
 *
 * Only the last replica tried answers the client, so an error every replica shares (a key wrong
 * for all of them, a request that fails each server with a 500) still reaches it, after each
 * replica was tried once.
 */
export function classifyReplicaFailure(error: unknown, context: ReplicaFailureContext = {}): 'rest' | 'busy' | 'final' {
  if (error instanceof UpstreamConnectionError || error instanceof UpstreamConnectTimeoutError || error instanceof UpstreamHeadersTimeoutError) {
    return 'rest';
  }
  // A redirect says this replica's URL is wrong (plain http to an https ingress), not the request.
  if (error instanceof UpstreamRedirectError) return 'rest';
  if (error instanceof UpstreamModelNotFoundError) return context.modelNamedByGateway ? 'rest' : 'final';
  if (error instanceof UpstreamResponseError) {
    if (error.status === 429 || (error.inStream && error.status < 500)) return 'busy';
    if (error.status === 500) return error.message === bareStatusMessage(500) ? 'rest' : 'busy';
    if (REPLICA_STATUSES.has(error.status)) return 'rest';
  }
  return 'final';
}

const REPLICA_STATUSES = new Set([401, 403, 502, 503, 504]);

/** Which replicas a stream may use, and what its failures mean. */
export interface FailoverTarget extends ReplicaFailureContext {
  replicas: UpstreamReplicas;
  /** The conversation's replica (several rounds); filled in with the replica that accepts. */
  affinity: ReplicaAffinity | undefined;
}

/**
 * One chat completion over a set of replicas: it goes to the replica `replicas.pick` names and,
 * if that one fails before any output reached the consumer, to the next, until one produces output
 * or each has been tried once. Before its first token (content, reasoning, a tool-call fragment
 * or a finish) a replica has sent at most its role chunk and usage: nothing the consumer shows, so
 * a replica that accepted the request (200, event stream) and then stayed silent past the
 * first-token deadline or dropped the connection is failed over from like one that refused it,
 * and rests (vLLM sends its headers before it prefills, so a wedged engine accepts and then says
 * nothing). The consumer is told of each accept (`onAccepted`), and gets one `start` part. After
 * the first token a failure ends the stream as it would with a single upstream: tokens already
 * delivered cannot be taken back; a connection lost then still counts against the replica.
 *
 * A replica counts as having served the stream (`succeeded`) at its first token, not at its
 * headers: a replica that accepts everything and answers nothing must not pass for healthy.
 *
 * Deadlines: connect, headers and first token are phases of one attempt, so the replica tried next
 * gets each of them whole (that is what lets a request move on from a replica silent past a short
 * `firstTokenMs`); with N replicas the wait for a first token is at most N × `firstTokenMs`.
 * `totalMs`, when set, bounds the whole request: it counts from the first attempt's start.
 */
export function startFailoverStream(target: FailoverTarget, options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void): UpstreamStream {
  const stream = new FailoverStream(target, options, onPart);
  stream.next();
  return stream;
}

class FailoverStream implements UpstreamStream {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  readonly #tried = new Set<Replica>();
  #attempt: UpstreamStream | undefined;
  /** A part with output reached the consumer: the stream can no longer move to another replica. */
  #generating = false;
  #startDelivered = false;
  #aborted = false;
  #abortReason: unknown;
  #paused = false;
  readonly #requestStartedAt = performance.now();
  /** The replicas that failed this stream as only busy: told once another one serves it (UpstreamReplicas.servedElsewhere). */
  #busyFailures: Array<{ replica: Replica; error: unknown; startedAt: number }> = [];

  private readonly replicas: UpstreamReplicas;
  private readonly target: FailoverTarget;
  private readonly options: ResolvedStreamOptions;
  private readonly affinity: ReplicaAffinity | undefined;
  private readonly onPart: (part: UpstreamPart) => void;

  constructor(target: FailoverTarget, options: ResolvedStreamOptions, onPart: (part: UpstreamPart) => void) {
    this.replicas = target.replicas;
    this.target = target;
    this.options = options;
    this.affinity = target.affinity;
    this.onPart = onPart;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  get interrupted(): boolean {
    return this.#attempt?.interrupted ?? false;
  }

  abort(reason: unknown): void {
    // Also stops a failover that an attempt's failure has already queued.
    this.#aborted = true;
    this.#abortReason = reason;
    this.#attempt?.abort(reason);
  }

  pause(): void {
    this.#paused = true;
    this.#attempt?.pause();
  }

  resume(): void {
    this.#paused = false;
    this.#attempt?.resume();
  }

  next(): void {
    // Never undefined: the first pick has every replica to choose from, and #failed retries only
    // while some replica is untried.
    const replica = this.replicas.pick(this.affinity, this.#tried)!;
    this.#tried.add(replica);
    replica.inFlight += 1;
    const startedAt = this.replicas.now();
    const attempt = startUpstreamStream(
      { ...this.options, baseUrl: replica.baseUrl, onAccepted: () => this.#onAccepted(replica) },
      (part) => this.#deliver(replica, part),
      this.#requestStartedAt,
    );
    this.#attempt = attempt;
    if (this.#paused) attempt.pause();
    attempt.done.then(
      () => {
        replica.inFlight -= 1;
        this.#resolve();
      },
      (error: unknown) => {
        replica.inFlight -= 1;
        this.#failed(replica, attempt, error, startedAt);
      },
    );
  }

  #onAccepted(replica: Replica): void {
    if (this.affinity) this.affinity.baseUrl = replica.baseUrl;
    this.options.onAccepted?.({ baseUrl: replica.baseUrl });
  }

  #deliver(replica: Replica, part: UpstreamPart): void {
    if (!this.#generating) {
      if (part.type === 'start') {
        // A replica taking over after another one's role chunk sends its own: the consumer has one.
        if (this.#startDelivered) return;
        this.#startDelivered = true;
      } else if (isGenerationPart(part) || part.type === 'end') {
        this.#generating = true;
        this.replicas.succeeded(replica);
        for (const busy of this.#busyFailures) this.replicas.servedElsewhere(busy.replica, busy.error, busy.startedAt);
        this.#busyFailures = [];
      }
    }
    this.onPart(part);
  }

  #failed(replica: Replica, attempt: UpstreamStream, error: unknown, startedAt: number): void {
    // An abort that came after this attempt had already failed is still the caller's own ending.
    if (this.#aborted) return this.#reject(this.#abortReason);
    const kind = this.#classify(attempt, error);
    if (kind === 'rest') this.replicas.failed(replica, error, startedAt);
    else if (kind === 'busy') this.#busyFailures.push({ replica, error, startedAt });
    if (kind === 'final' || totalRanOutOnErrorAnswer(attempt, error) || this.#generating || this.#tried.size === this.replicas.replicas.length) {
      return this.#reject(error);
    }
    this.next();
  }

  #classify(attempt: UpstreamStream, error: unknown): 'rest' | 'busy' | 'final' {
    if (this.options.signal.aborted) return 'final';
    // Mid-answer, a lost connection is the replica's (it crashed or was killed), and the streams in
    // flight to it count as one failure (UpstreamReplicas.failed); an idle or total deadline or an
    // error event there is not counted: it may be the request's own.
    if (this.#generating) return error instanceof UpstreamConnectionError ? 'rest' : 'final';
    // No first token in time, whether the replica had sent its headers or not (a first-token
    // deadline shorter than connect + headers can expire before it answered at all).
    if (error instanceof UpstreamFirstTokenTimeoutError) return 'rest';
    // Any other deadline (the request's total) is the request's own budget, not the replica's fault;
    // but an error status the replica sent before it ran out (the attempt then fails with what came
    // of its body, pumped-stream.ts) is the replica's answer, and counts as it would have in time.
    if (attempt.interrupted && !totalRanOutOnErrorAnswer(attempt, error)) return 'final';
    // An answer that ended or went wrong before its first token (no chunk, a body cut off cleanly
    // without a finish_reason, a 200 that is not an event stream) left the consumer nothing to keep:
    // another replica may do better. Not rested: one such answer says little of the replica's health.
    if (error instanceof UpstreamProtocolError) return 'busy';
    return classifyReplicaFailure(error, this.target);
  }
}

/**
 * The request's total ran out while an error answer's body was read: the attempt fails with the
 * status and what came of the body (pumped-stream.ts), but no replica is tried next with none of
 * the request's time left.
 */
function totalRanOutOnErrorAnswer(attempt: UpstreamStream, error: unknown): boolean {
  return attempt.interrupted && error instanceof UpstreamResponseError;
}
