import { performance } from 'node:perf_hooks';
import {
  UpstreamConnectionError,
  UpstreamConnectTimeoutError,
  UpstreamFirstTokenTimeoutError,
  UpstreamHeadersTimeoutError,
  UpstreamResponseError,
} from '../core/errors.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
import type { Replica, ReplicaAffinity, UpstreamReplicas } from './upstream-replicas.ts';
import { startUpstreamStream, type UpstreamStream } from './upstream-stream.ts';

/**
 * How a failed attempt counts: `rest` — the replica itself is down or drowning (refused or reset
 * connection, connect or headers timeout, 502/503/504), so it rests and another one is tried;
 * `busy` — it is only full (429), so another one is tried but it does not rest; `final` — any other
 * replica would answer the same (400 bad request, 404 unknown model, 500), or the failure is this
 * process's own: the caller stopped it, or the pools were closed under it (`ShuttingDownError`).
 * A stale keep-alive socket is none of these: the attempt already sent it again on a new connection
 * (keep-alive-retry-stream.ts), and what reaches here failed there too.
 */
export function classifyReplicaFailure(error: unknown): 'rest' | 'busy' | 'final' {
  if (error instanceof UpstreamConnectionError || error instanceof UpstreamConnectTimeoutError || error instanceof UpstreamHeadersTimeoutError) {
    return 'rest';
  }
  if (error instanceof UpstreamResponseError) {
    if (error.status === 429) return 'busy';
    if (error.status === 502 || error.status === 503 || error.status === 504) return 'rest';
  }
  return 'final';
}

/**
 * One chat completion over a set of replicas: it goes to the replica `replicas.pick` names and,
 * if that one fails before it has accepted the request (so no part has reached the consumer yet),
 * to the next, until one accepts or each has been tried once. Once a replica has accepted, a
 * failure ends the stream as it would with a single upstream: tokens already delivered cannot be
 * taken back.
 *
 * Deadlines: connect, headers and first token are phases of one attempt, so the replica tried next
 * gets each of them whole (that is what lets a request move on from a replica silent past a short
 * `firstTokenMs`); with N replicas the wait for a first token is at most N × `firstTokenMs`.
 * `totalMs`, when set, bounds the whole request: it counts from the first attempt's start.
 */
export function startFailoverStream(
  replicas: UpstreamReplicas,
  options: ResolvedStreamOptions,
  affinity: ReplicaAffinity | undefined,
  onPart: (part: UpstreamPart) => void,
): UpstreamStream {
  const stream = new FailoverStream(replicas, options, affinity, onPart);
  stream.next();
  return stream;
}

class FailoverStream implements UpstreamStream {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (reason: unknown) => void;
  readonly #tried = new Set<Replica>();
  #attempt: UpstreamStream | undefined;
  #accepted = false;
  #aborted = false;
  #abortReason: unknown;
  #paused = false;
  readonly #requestStartedAt = performance.now();

  private readonly replicas: UpstreamReplicas;
  private readonly options: ResolvedStreamOptions;
  private readonly affinity: ReplicaAffinity | undefined;
  private readonly onPart: (part: UpstreamPart) => void;

  constructor(replicas: UpstreamReplicas, options: ResolvedStreamOptions, affinity: ReplicaAffinity | undefined, onPart: (part: UpstreamPart) => void) {
    this.replicas = replicas;
    this.options = options;
    this.affinity = affinity;
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
      this.onPart,
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
    this.#accepted = true;
    this.replicas.succeeded(replica);
    if (this.affinity) this.affinity.baseUrl = replica.baseUrl;
    this.options.onAccepted?.({ baseUrl: replica.baseUrl });
  }

  #failed(replica: Replica, attempt: UpstreamStream, error: unknown, startedAt: number): void {
    // An abort that came after this attempt had already failed is still the caller's own ending.
    if (this.#aborted) return this.#reject(this.#abortReason);
    // A first-token deadline shorter than connect + headers can expire before the replica has
    // answered at all: that replica is as unresponsive as one past its headers timeout.
    const silent = !this.#accepted && error instanceof UpstreamFirstTokenTimeoutError;
    const stopped = this.#accepted || (attempt.interrupted && !silent) || this.options.signal.aborted;
    const kind = stopped ? 'final' : silent ? 'rest' : classifyReplicaFailure(error);
    if (kind === 'rest') this.replicas.failed(replica, error, startedAt);
    if (kind === 'final' || this.#tried.size === this.replicas.replicas.length) return this.#reject(error);
    this.next();
  }
}
