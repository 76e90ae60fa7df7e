import {
  INTER_TOKEN_BUCKETS,
  LatencyHistogram,
  REQUEST_LATENCY_BUCKETS,
  TTFT_BUCKETS,
} from './latency-histogram.ts';
import type { FinishReason } from './sequence.ts';

/** A snapshot of what the engine has done; served at GET /sim/counters. */
export interface SimCounters {
  /** Engine steps started (each ends by emitting one token for every sequence in its batch). */
  steps: number;
  /** Steps that also prefilled newly admitted sequences. */
  prefillSteps: number;
  tokensGenerated: number;
  /** Prompt tokens of admitted sequences (vLLM counts cached ones too). */
  promptTokens: number;
  /** Prompt tokens looked up in the prefix cache, and those found there (not prefilled). */
  prefixCacheQueries: number;
  prefixCacheHits: number;
  /** Valid requests handed to the engine (queued or running). */
  requestsReceived: number;
  /** Sequences admitted into the running batch (their prefill began). */
  requestsStarted: number;
  /** Sequences that emitted their last token (finish_reason stop or length). */
  requestsFinished: number;
  finishedStop: number;
  finishedLength: number;
  /** Sequences dropped before finishing: client disconnects, running or still queued. */
  abortedSequences: number;
  /** Sequences in the running batch now (aborted ones count until the next step boundary). */
  running: number;
  /** Requests queued because the batch is full (maxNumSeqs). */
  waiting: number;
  maxWaiting: number;
  /** Largest number of sequences that shared one step. */
  maxBatchOccupancy: number;
  /** Sequences per step, averaged over all steps (0 before the first step). */
  meanBatchOccupancy: number;
  /** Simulated GPU time: the sum of all step durations, in ms. */
  busyMs: number;
  /** Times the loop fell more than a step behind its absolute schedule and re-anchored. */
  scheduleSlips: number;
}

/** Counters plus latency histograms; mutated only by EngineLoop. */
export class EngineStats {
  readonly ttft = new LatencyHistogram(TTFT_BUCKETS);
  readonly e2eLatency = new LatencyHistogram(REQUEST_LATENCY_BUCKETS);
  readonly interTokenLatency = new LatencyHistogram(INTER_TOKEN_BUCKETS);
  steps = 0;
  prefillSteps = 0;
  tokensGenerated = 0;
  promptTokens = 0;
  prefixCacheQueries = 0;
  prefixCacheHits = 0;
  requestsReceived = 0;
  requestsStarted = 0;
  finished: Record<FinishReason, number> = { stop: 0, length: 0 };
  abortedSequences = 0;
  maxWaiting = 0;
  maxBatchOccupancy = 0;
  occupancySum = 0;
  busyMs = 0;
  scheduleSlips = 0;

  snapshot(running: number, waiting: number): SimCounters {
    return {
      steps: this.steps,
      prefillSteps: this.prefillSteps,
      tokensGenerated: this.tokensGenerated,
      promptTokens: this.promptTokens,
      prefixCacheQueries: this.prefixCacheQueries,
      prefixCacheHits: this.prefixCacheHits,
      requestsReceived: this.requestsReceived,
      requestsStarted: this.requestsStarted,
      requestsFinished: this.finished.stop + this.finished.length,
      finishedStop: this.finished.stop,
      finishedLength: this.finished.length,
      abortedSequences: this.abortedSequences,
      running,
      waiting,
      maxWaiting: this.maxWaiting,
      maxBatchOccupancy: this.maxBatchOccupancy,
      meanBatchOccupancy: this.steps === 0 ? 0 : this.occupancySum / this.steps,
      busyMs: this.busyMs,
      scheduleSlips: this.scheduleSlips,
    };
  }
}
