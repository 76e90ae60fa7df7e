/**
 * Which of several replicas of one model (the same weights behind different base URLs) takes the
 * next stream, and which are resting after a failure.
 *
 * A conversation's rounds go back to the replica that served its previous round (`ReplicaAffinity`):
 * each round's prompt is the previous one plus the model's turn and the tools' observations, so that
 * replica's prefix cache already holds almost all of it and its prefill is nearly free. So do a
 * client's later turns, which resend the conversation: `conversations` remembers each recent
 * conversation's replica. New conversations go to the replica with the fewest streams in flight
 * from this process.
 *
 * Health is passive: a replica that failed (failover-stream.ts, `classifyReplicaFailure`) rests for
 * a while (doubling with each failure in a row, up to a ceiling). Once the rest is over it is on
 * trial (half-open): one request at a time may try it, while the others keep going to replicas
 * without failures; a success ends the trial, a failure starts the next, longer rest. No probe
 * traffic is sent: the trial request is a client's, and fails over if the replica fails it again.
 */

import { RecentConversations } from './recent-conversations.ts';

/** One conversation's hold on a replica: the caller keeps one per conversation, the pump fills it in. */
export interface ReplicaAffinity {
  /** The replica that accepted the conversation's latest round. */
  baseUrl?: string;
}

export interface ReplicaHealthOptions {
  /** Rest after the first failure in a row; each further failure doubles it. */
  restMs?: number;
  /** The longest rest. */
  maxRestMs?: number;
  /** Monotonic milliseconds (tests pass a fake). */
  now?: () => number;
  /** Told when a replica starts to rest and when it serves a request again after failures (the gateway logs both). */
  onHealthChange?: (event: ReplicaHealthEvent) => void;
}

export type ReplicaHealthEvent =
  | { type: 'resting'; baseUrl: string; restMs: number; consecutiveFailures: number; error: unknown }
  | { type: 'recovered'; baseUrl: string; consecutiveFailures: number };

/**
 * `healthy`: no failure since its latest success. `resting`: it failed and is not tried now.
 * `probing`: its rest is over but it has not succeeded since it failed; one request at a time tries it.
 */
export type ReplicaHealth = 'healthy' | 'resting' | 'probing';

/** What `/health` shows of one replica. */
export interface ReplicaState {
  baseUrl: string;
  state: ReplicaHealth;
  /** `state === 'healthy'`: a replica whose rest is merely over has not proved itself yet. */
  healthy: boolean;
  inFlight: number;
  /** Milliseconds of rest left; 0 once the rest is over. */
  restingForMs: number;
  consecutiveFailures: number;
  /**
   * Streams it served (a chat stream counts once its first token arrived: headers alone prove
   * nothing, vLLM sends them before it prefills), and failures counted against it, since start.
   */
  accepted: number;
  failures: number;
}

export class Replica {
  readonly baseUrl: string;
  inFlight = 0;
  consecutiveFailures = 0;
  restingUntil = 0;
  accepted = 0;
  failures = 0;
  /** When the latest failure in a row was counted (the clock of UpstreamReplicas); -Infinity: none yet. */
  lastFailureAt = Number.NEGATIVE_INFINITY;
  /** When a request was last sent to try it after a rest; -Infinity: no trial under way. */
  trialSince = Number.NEGATIVE_INFINITY;
  /** Streams it failed as only busy that another replica then served, since its latest success (`servedElsewhere`). */
  servedElsewhereInARow = 0;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }
}

export class UpstreamReplicas {
  readonly replicas: readonly Replica[];
  /** The replica of each recent conversation, for the client's next turn (the caller keys them). */
  readonly conversations = new RecentConversations();
  readonly #restMs: number;
  readonly #maxRestMs: number;
  readonly #now: () => number;
  readonly #onHealthChange: ((event: ReplicaHealthEvent) => void) | undefined;
  /** Where the search for the least loaded starts, so ties rotate instead of piling on the first. */
  #cursor = 0;

  constructor(baseUrls: readonly string[], options: ReplicaHealthOptions = {}) {
    if (baseUrls.length === 0) throw new TypeError('UpstreamReplicas needs at least one base URL');
    if (new Set(baseUrls).size !== baseUrls.length) throw new TypeError(`a replica is listed twice: ${baseUrls.join(', ')}`);
    this.replicas = baseUrls.map((url) => new Replica(url));
    this.#restMs = options.restMs ?? 2_000;
    this.#maxRestMs = options.maxRestMs ?? 30_000;
    this.#now = options.now ?? (() => performance.now());
    this.#onHealthChange = options.onHealthChange;
  }

  /**
   * The replica for a conversation's next attempt, never one in `tried`: its own replica if that is
   * available, else the available one with the fewest streams in flight. Available: no failure
   * since its latest success, or on trial (rest over) with nothing in flight to it, so that only
   * one request at a time tries a replica that failed. When no untried replica is available, the
   * one back soonest (on trial before resting, then fewest in flight): a request is never refused
   * for want of a healthy replica, the outage may be over. `undefined` once every replica was tried.
   *
   * A trial is the request sent to it once its rest is over: it holds the replica while something
   * is in flight to it (`inFlight`, which every caller counts for the attempt it starts and
   * uncounts however it ends, so a trial the client abandoned frees it at once), for at most
   * TRIAL_HOLD_MS. Streams from before the failure (past their first token, they can prove
   * nothing) do not hold it: only a trial started since does, and no longer than that bound.
   */
  pick(affinity: ReplicaAffinity | undefined, tried: ReadonlySet<Replica>): Replica | undefined {
    const now = this.#now();
    const n = this.replicas.length;
    let best: Replica | undefined;
    let fallback: Replica | undefined;
    let affine: Replica | undefined;
    for (let k = 0; k < n; k++) {
      const replica = this.replicas[(this.#cursor + k) % n]!;
      if (tried.has(replica)) continue;
      const trialHeld = replica.consecutiveFailures > 0 && replica.inFlight > 0 && now - replica.trialSince < TRIAL_HOLD_MS;
      if (replica.restingUntil > now || trialHeld) {
        if (fallback === undefined || backSooner(replica, fallback, now)) fallback = replica;
        continue;
      }
      if (replica.baseUrl === affinity?.baseUrl) affine = replica;
      if (best === undefined || replica.inFlight < best.inFlight) best = replica;
    }
    if (affine && !crowded(affine, best!)) return this.#chosen(affine, now);
    this.#cursor = (this.#cursor + 1) % n;
    const chosen = best ?? fallback;
    return chosen && this.#chosen(chosen, now);
  }

  /** A replica whose rest is over and that has not succeeded since starts its trial with this request. */
  #chosen(replica: Replica, now: number): Replica {
    if (replica.consecutiveFailures > 0 && replica.restingUntil <= now) replica.trialSince = now;
    return replica;
  }

  /** The replica served a stream (its first token, or a forwarded answer): its failures in a row are over. */
  succeeded(replica: Replica): void {
    replica.accepted += 1;
    if (replica.consecutiveFailures > 0) {
      this.#onHealthChange?.({ type: 'recovered', baseUrl: replica.baseUrl, consecutiveFailures: replica.consecutiveFailures });
    }
    replica.consecutiveFailures = 0;
    replica.servedElsewhereInARow = 0;
    replica.restingUntil = 0;
    replica.trialSince = Number.NEGATIVE_INFINITY;
  }

  /** The replicas' clock: an attempt notes its start with it, for `failed`. */
  now(): number {
    return this.#now();
  }

  /**
   * The replica failed in a way another replica may not (failover-stream.ts, `classifyReplicaFailure`):
   * it rests. An attempt that began before the replica's latest failure was counted is the same outage seen
   * again (every stream in flight when a replica falls over fails with it): it counts in `failures`
   * but neither doubles the rest nor extends it, or one burst would rest a replica for the ceiling.
   */
  failed(replica: Replica, error?: unknown, attemptStartedAt = this.#now()): void {
    replica.failures += 1;
    if (attemptStartedAt < replica.lastFailureAt) return;
    replica.lastFailureAt = this.#now();
    replica.trialSince = Number.NEGATIVE_INFINITY;
    replica.consecutiveFailures += 1;
    const rest = Math.min(this.#maxRestMs, this.#restMs * 2 ** (replica.consecutiveFailures - 1));
    replica.restingUntil = this.#now() + rest;
    this.#onHealthChange?.({ type: 'resting', baseUrl: replica.baseUrl, restMs: rest, consecutiveFailures: replica.consecutiveFailures, error });
  }

  /**
   * The replica failed a stream in a way that counts as only busy (an error event before any token,
   * a 500 that says why: possibly the request's own doing) and another replica then served that
   * stream: so it was not the request. BUSY_STREAK of those in a row, with no stream of its own
   * served between, and it rests as after a failure. Uncounted, a replica that fails every stream
   * inside it never rested, and as its failures end quickest, least-in-flight picking sent it most
   * new conversations first, each paying a failed attempt.
   */
  servedElsewhere(replica: Replica, error: unknown, attemptStartedAt: number): void {
    replica.servedElsewhereInARow += 1;
    if (replica.servedElsewhereInARow < BUSY_STREAK) return;
    replica.servedElsewhereInARow = 0;
    this.failed(replica, error, attemptStartedAt);
  }

  states(): ReplicaState[] {
    const now = this.#now();
    return this.replicas.map((r) => {
      const state: ReplicaHealth = r.consecutiveFailures === 0 ? 'healthy' : r.restingUntil > now ? 'resting' : 'probing';
      return {
        baseUrl: r.baseUrl,
        state,
        healthy: state === 'healthy',
        inFlight: r.inFlight,
        restingForMs: Math.max(0, Math.ceil(r.restingUntil - now)),
        consecutiveFailures: r.consecutiveFailures,
        accepted: r.accepted,
        failures: r.failures,
      };
    });
  }
}

/**
 * A conversation's replica is left for the least loaded one only when its queue is far longer:
 * its prefix cache saves the conversation's prefill, worth a longer queue, but not one that holds
 * every conversation after a failover burst while restarted replicas sit idle (bounded-load
 * affinity: more than twice the least loaded replica's streams, plus a margin).
 */
function crowded(affine: Replica, least: Replica): boolean {
  return affine.inFlight > AFFINITY_LOAD_FACTOR * least.inFlight + AFFINITY_LOAD_MARGIN;
}

/** Busy failures in a row (each served by another replica) that rest a replica (UpstreamReplicas.servedElsewhere). */
const BUSY_STREAK = 3;

/** The longest one trial holds a replica back from other requests (a first token takes less, even behind a long prompt). */
const TRIAL_HOLD_MS = 10_000;

const AFFINITY_LOAD_FACTOR = 2;
const AFFINITY_LOAD_MARGIN = 8;

/** Of two replicas not available now, the one to try first: on trial before resting, then the rest that ends first, then the least loaded. */
function backSooner(a: Replica, b: Replica, now: number): boolean {
  const aBack = Math.max(a.restingUntil, now);
  const bBack = Math.max(b.restingUntil, now);
  return aBack !== bBack ? aBack < bBack : a.inFlight < b.inFlight;
}
