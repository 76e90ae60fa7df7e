import type { Mode } from './arrival-schedule.ts';
import type { PhaseRun } from './run-phase.ts';
import { mean, summarize } from '../stats.ts';

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface ModeSummary {
  /** Requests of this mode sent in the phase. */
  sent: number;
  completed: number;
  failed: number;
  /** Completions per second between this mode's first and last completion. */
  completedPerS: number;
  latencyMs: LatencySummary;
  ttftP50Ms: number;
  /** Mean decode time of round 1 (the code), from the timelines. */
  g1Ms: number;
  /** Mean tool time (first tool activity → result). */
  toolMs: number;
  /** Mean time round 1 waited for its tool after the decode ended: what partial execution hides. */
  toolWaitAfterDecodeMs: number;
}

export interface PhaseSummary {
  ratePerS: number;
  durationS: number;
  /** Arrivals actually drawn / duration: the offered load of this seed. */
  offeredPerS: number;
  spanS: number;
  /** Completions per second between the first and the last completion, both modes. */
  completedPerS: number;
  /** Sequences per engine step over the phase (from /sim/counters deltas). */
  meanBatch: number;
  maxBatchSampled: number;
  meanStepMs: number;
  /** Requests queued in the engine (batch full), time-averaged over the samples. */
  meanWaiting: number;
  maxWaitingSampled: number;
  scheduleSlips: number;
  /** Largest client lateness: how far the shared event loop pushed a send past its schedule. */
  maxClientLateMs: number;
  on: ModeSummary;
  off: ModeSummary;
  /** (off − on) / off of the median and of the mean latency, %. */
  gainP50Pct: number;
  gainMeanPct: number;
  savedP50Ms: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/**
 * (n − 1) completions over the time from the first to the last: below saturation it follows the
 * offered rate, at saturation it is the rate the engine can serve. Dividing by the phase span
 * instead would count the ramp-up and the drain as idle time.
 */
export function completionRate(doneAtMs: readonly number[]): number {
  if (doneAtMs.length < 2) return NaN;
  const first = Math.min(...doneAtMs);
  const last = Math.max(...doneAtMs);
  return last > first ? ((doneAtMs.length - 1) * 1000) / (last - first) : NaN;
}


export function summarizePhase(run: PhaseRun): PhaseSummary {
  const spanS = run.spanMs / 1000;
  const mode = (m: Mode): ModeSummary => {
    const mine = run.records.filter((r) => r.mode === m);
    const ok = mine.filter((r) => !r.error);
    const latencies = ok.map((r) => r.latencyMs).sort((a, b) => a - b);
    return {
      sent: mine.length,
      completed: ok.length,
      failed: mine.length - ok.length,
      completedPerS: completionRate(ok.map((r) => r.doneAtMs)),
      latencyMs: { mean: mean(latencies), p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), max: latencies.at(-1) ?? NaN },
      // summarize() and mean() leave out a figure one request lacks (a stream with no content token:
      // NaN TTFT; a timeline without rounds): a NaN sorted in broke the p50, summed in it made the
      // whole mean NaN, so one request took every other request's g₁, t and tool wait with it.
      ttftP50Ms: summarize(ok.map((r) => r.ttftMs)).p50,
      g1Ms: mean(ok.map((r) => r.rounds[0]?.generationMs ?? NaN)),
      toolMs: mean(ok.map((r) => r.rounds[0]?.toolMs ?? NaN)),
      toolWaitAfterDecodeMs: mean(ok.map((r) => r.rounds[0]?.toolWaitAfterDecodeMs ?? NaN)),
    };
  };
  const { before, after, samples } = run;
  const steps = after.steps - before.steps;
  // meanBatchOccupancy is cumulative since the sim started: recover this phase's sum from it.
  const occupancy = after.meanBatchOccupancy * after.steps - before.meanBatchOccupancy * before.steps;
  const on = mode('on');
  const off = mode('off');
  return {
    ratePerS: run.ratePerS,
    durationS: run.durationS,
    offeredPerS: run.records.length / run.durationS,
    spanS,
    completedPerS: completionRate(run.records.filter((r) => !r.error).map((r) => r.doneAtMs)),
    meanBatch: steps > 0 ? occupancy / steps : 0,
    maxBatchSampled: Math.max(0, ...samples.map((s) => s.running)),
    meanStepMs: steps > 0 ? (after.busyMs - before.busyMs) / steps : NaN,
    meanWaiting: mean(samples.map((s) => s.waiting)),
    maxWaitingSampled: Math.max(0, ...samples.map((s) => s.waiting)),
    scheduleSlips: after.scheduleSlips - before.scheduleSlips,
    maxClientLateMs: Math.max(0, ...run.records.map((r) => r.lateMs)),
    on,
    off,
    gainP50Pct: ((off.latencyMs.p50 - on.latencyMs.p50) / off.latencyMs.p50) * 100,
    gainMeanPct: ((off.latencyMs.mean - on.latencyMs.mean) / off.latencyMs.mean) * 100,
    savedP50Ms: off.latencyMs.p50 - on.latencyMs.p50,
  };
}
