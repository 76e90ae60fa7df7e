import { monotonicClock, type EngineClock } from './engine-clock.ts';
import { EngineStats, type SimCounters } from './engine-stats.ts';
import { Sequence, type SequenceListener, type SequencePlan } from './sequence.ts';
import type { PrefixCache } from './prefix-cache.ts';
import type { TimingProfile } from './timing-profile.ts';

export interface EngineLoopOptions {
  profile: TimingProfile;
  clock?: EngineClock;
  /** Automatic prefix caching, as vLLM V1 does by default; absent = every prompt prefilled whole. */
  prefixCache?: PrefixCache;
}

/** The caller's grip on a submitted sequence. */
export interface SequenceHandle {
  readonly id: number;
  /** Drops the sequence: at once if still queued, at the next step boundary if running. */
  abort(): void;
}

/**
 * Duration of one engine step: `batchSize` sequences each produce one token, those decoding reading
 * the KV cache of the `contextTokens` they hold, and `prefillTokens` prompt tokens are prefilled in
 * the same step (a prompt whose last chunk this is has its first token at its end), as vLLM's
 * scheduler mixes prefill chunks into decode batches. `prefillContextPairs` is Σ chunk × the
 * context before it (its cached prefix and earlier chunks): the attention a resumed conversation's
 * new tokens pay over what the prefix cache held.
 */
export function stepDurationMs(
  profile: TimingProfile,
  batchSize: number,
  prefillTokens: number | null,
  contextTokens = 0,
  prefillContextPairs = 0,
): number {
  const { baseMs: decodeBaseMs, perSeqMs, perContextTokenMs = 0 } = profile.decode;
  const decode = decodeBaseMs + perSeqMs * batchSize + perContextTokenMs * contextTokens;
  if (prefillTokens === null) return decode;
  const { baseMs, perTokenMs, freeTokens = 0, perTokenContextMs = 0 } = profile.prefill;
  return decode + baseMs + perTokenMs * Math.max(0, prefillTokens - freeTokens) + perTokenContextMs * prefillContextPairs;
}

/**
 * One continuous-batching engine: a single step loop shared by every request of a server.
 * Requests queue, join the running batch only at step boundaries (up to maxNumSeqs), emit one
 * token per step, and leave at the boundary after their last token or after an abort.
 *
 * Steps are scheduled against absolute target times (previous target + this step's duration),
 * so timer lateness does not accumulate; only when the loop falls more than a whole step behind
 * does it re-anchor on the current time (counted in `scheduleSlips`).
 */
export class EngineLoop {
  readonly profile: TimingProfile;
  readonly stats = new EngineStats();
  private readonly clock: EngineClock;
  private readonly prefixCache: PrefixCache | undefined;
  private readonly waiting: Sequence[] = [];
  private running: Sequence[] = [];
  /** The sequences of the step in flight; empty when idle. */
  private batch: Sequence[] = [];
  private stepTarget: number | null = null;
  private cancelTimer: (() => void) | null = null;
  private nextId = 1;
  private closed = false;

  constructor(options: EngineLoopOptions) {
    this.profile = options.profile;
    this.clock = options.clock ?? monotonicClock;
    this.prefixCache = options.prefixCache;
  }

  get idle(): boolean {
    return this.stepTarget === null;
  }

  submit(plan: SequencePlan, listener: SequenceListener): SequenceHandle {
    if (this.closed) throw new Error('the engine loop is closed');
    const seq = new Sequence(this.nextId++, plan, listener, this.clock.now());
    this.stats.requestsReceived += 1;
    this.waiting.push(seq);
    if (this.idle) this.beginStep(this.clock.now());
    else this.stats.maxWaiting = Math.max(this.stats.maxWaiting, this.waiting.length);
    return { id: seq.id, abort: () => this.abort(seq) };
  }

  /** Forgets every cached prefix (vLLM's POST /reset_prefix_cache). */
  resetPrefixCache(): void {
    this.prefixCache?.clear();
  }

  counters(): SimCounters {
    return this.stats.snapshot(this.running.length, this.waiting.length);
  }

  /** Stops the loop; every unfinished sequence is aborted and its listener told so. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.stepTarget = null;
    const unfinished = [...this.running, ...this.waiting].filter((s) => s.state !== 'finished');
    this.running = [];
    this.waiting.length = 0;
    this.batch = [];
    for (const seq of unfinished) {
      seq.state = 'aborted';
      this.stats.abortedSequences += 1;
      seq.listener.onAborted?.();
    }
  }

  private abort(seq: Sequence): void {
    if (seq.state === 'finished' || seq.state === 'aborted') return;
    if (seq.state === 'waiting') {
      this.waiting.splice(this.waiting.indexOf(seq), 1);
      seq.state = 'aborted';
      this.stats.abortedSequences += 1;
      return;
    }
    seq.abortRequested = true;
  }

  private endStep(): void {
    this.cancelTimer = null;
    const target = this.stepTarget;
    if (target === null) return;
    const now = this.clock.now();
    for (const seq of this.batch) {
      if (seq.abortRequested) continue;
      this.emit(seq, now);
    }
    this.beginStep(target);
  }

  private emit(seq: Sequence, now: number): void {
    const event = seq.nextToken();
    this.stats.tokensGenerated += 1;
    if (seq.lastTokenAt === null) {
      seq.firstTokenAt = now;
      this.stats.ttft.observe((now - seq.arrivedAt) / 1000);
    } else {
      this.stats.interTokenLatency.observe((now - seq.lastTokenAt) / 1000);
    }
    seq.lastTokenAt = now;
    if (event.finishReason !== null) {
      seq.state = 'finished';
      this.stats.finished[event.finishReason] += 1;
      this.stats.e2eLatency.observe((now - seq.arrivedAt) / 1000);
    }
    try {
      seq.listener.onToken(event);
    } catch {
      // A broken listener (its socket died mid-write) must not stall everyone else's step.
      this.abort(seq);
    }
  }

  /**
   * A step boundary: retire, fill the step's token budget as vLLM V1's scheduler does (the running
   * sequences first, one token each for those decoding and the next chunk for those still
   * prefilling; then the waiting ones, admitted while seats and budget remain), and launch the
   * step (or go idle).
   */
  private beginStep(previousTarget: number): void {
    const kept: Sequence[] = [];
    for (const seq of this.running) {
      if (seq.state === 'finished') continue;
      if (seq.abortRequested) {
        seq.state = 'aborted';
        this.stats.abortedSequences += 1;
        continue;
      }
      kept.push(seq);
    }
    this.running = kept;
    let budget = this.profile.maxNumBatchedTokens ?? Number.POSITIVE_INFINITY;
    /** The sequences that emit a token at the end of this step. */
    const emitting: Sequence[] = [];
    // Only decoding sequences read their KV cache here; prompts are charged as prefill.
    let contextTokens = 0;
    let prefillTokens: number | null = null;
    let prefillContextPairs = 0;
    const prefill = (seq: Sequence): void => {
      const chunk = Math.min(seq.prefillLeft, budget);
      if (chunk === 0 && seq.prefillLeft > 0) return;
      prefillContextPairs += chunk * (seq.plan.promptTokens - seq.prefillLeft);
      seq.prefillLeft -= chunk;
      budget -= chunk;
      prefillTokens = (prefillTokens ?? 0) + chunk;
      if (seq.prefillLeft === 0) emitting.push(seq);
    };
    for (const seq of kept) {
      if (seq.prefillLeft > 0) {
        prefill(seq);
      } else if (budget >= 1) {
        budget -= 1;
        contextTokens += seq.contextTokens;
        emitting.push(seq);
      }
    }
    while (this.running.length < this.profile.maxNumSeqs && this.waiting.length > 0 && budget > 0) {
      const seq = this.waiting.shift()!;
      seq.state = 'running';
      this.running.push(seq);
      this.stats.requestsStarted += 1;
      const cached = seq.plan.promptTokenIds && this.prefixCache ? this.prefixCache.admit(seq.plan.promptTokenIds) : 0;
      this.stats.promptTokens += seq.plan.promptTokens;
      if (this.prefixCache) {
        this.stats.prefixCacheQueries += seq.plan.promptTokens;
        this.stats.prefixCacheHits += cached;
      }
      // The cache never covers a whole prompt: its last token's logits give the first output token.
      seq.prefillLeft = seq.plan.promptTokens - cached;
      seq.cachedTokens = cached;
      prefill(seq);
    }
    this.stats.maxWaiting = Math.max(this.stats.maxWaiting, this.waiting.length);

    if (this.running.length === 0) {
      this.batch = [];
      this.stepTarget = null;
      return;
    }
    const duration = stepDurationMs(this.profile, emitting.length, prefillTokens, contextTokens, prefillContextPairs);
    const now = this.clock.now();
    let target = previousTarget + duration;
    if (target < now) {
      target = now + duration;
      this.stats.scheduleSlips += 1;
    }
    this.batch = emitting;
    this.stats.steps += 1;
    if (prefillTokens !== null) this.stats.prefillSteps += 1;
    this.stats.occupancySum += this.batch.length;
    this.stats.maxBatchOccupancy = Math.max(this.stats.maxBatchOccupancy, this.batch.length);
    this.stats.busyMs += duration;
    this.stepTarget = target;
    this.cancelTimer = this.clock.runAt(target, () => this.endStep());
  }
}
