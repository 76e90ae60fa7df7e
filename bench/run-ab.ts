import type { RoundSummary, TimelineEvent } from '../gateway/timeline.ts';
import { mean, summarize, type Summary } from './stats.ts';
import { timedStream } from './stream-request.ts';
import type { Workload, WorkloadEnv } from './workloads/workload.ts';

export interface RunRecord {
  mode: 'on' | 'off';
  totalMs: number;
  ttftMs: number;
  rounds: RoundSummary[];
  /** Detection workloads: request start → rejection, and the earliest possible (field decoded). */
  detection?: { detectedMs: number; boundMs: number };
  /** Tool calls that ended in an error (a timeout, a crash): the run timed a failure, not a tool's work. */
  failedCalls: number;
}

export interface BoundRuns {
  used: number;
  leftOut: number;
  /** Why `leftOut` runs are in no bound figure; null where none is. */
  why: string | null;
}

/** One request's timeline events; kept for the typical run of each mode, not for every run. */
type Examples = Record<'on' | 'off', readonly TimelineEvent[]>;

export interface WorkloadReport {
  workload: string;
  description: string;
  runs: number;
  on: Summary;
  off: Summary;
  /** (off − on) / off, from the means. */
  improvementPct: number;
  /** Mean decode time per round (g_i), ms. */
  generationMs: number[];
  /** Mean tool time per tool round (t_i), ms, from the sequential runs where tools run alone. */
  toolMs: number[];
  /** Σ max(g_i, t_i) + g_{n+1}: the best partial execution can do with these g and t. */
  boundMs: number;
  /** Σ (g_i + t_i) + g_{n+1}: the sequential ideal with no overheads. */
  sequentialIdealMs: number;
  /** bound / mean(on): 1.0 = partial execution reached its theoretical bound. */
  boundAchieved: number;
  /** What on/off/improvement/bound measure: end-to-end latency, or time to detect an invalid call. */
  metric: 'latency' | 'detection';
  /** Tool calls that failed, all runs together (the report flags a workload with any). */
  failedCalls: number;
  /** Runs with another number of rounds than the typical one, left out of g_i, t_i and the bound (roundFigures). */
  otherShapes?: number;
  /**
   * The measured runs g_i, t_i and the bound are read from, those left out of them, and why: where
   * otherShapes is absent the JSON alone did not say whether runs were left out. A detection
   * workload's bound is the partial-execution runs' (the moment they decoded the invalid field).
   */
  boundRuns: BoundRuns;
  /**
   * A detection workload's rounds that fewer than all sequential runs reached (1-based), with the runs
   * their g_i is the mean of: a run ended by its rejection has no later rounds. Absent or empty: all.
   */
  generationRuns?: Array<{ round: number } & BoundRuns>;
  records: RunRecord[];
  /** The timeline of each mode's median run (the timelines chart draws them). */
  examples: Examples;
}

/**
 * Runs a workload with partial execution on and off in alternation (A B A B …), so both modes
 * see the same machine noise, and reads g_i and t_i from each request's timeline.
 */
export async function runAb(opts: {
  gatewayUrl: string;
  workload: Workload;
  env: WorkloadEnv;
  runs: number;
  warmup?: number;
  /**
   * Send each on/off pair at the same moment (both in the sim's batch at once) instead of one
   * after the other: half the wall time, and both modes meet exactly the same machine noise.
   */
  concurrentPairs?: boolean;
  /** Awaited between the warm-up pairs and the measured ones. */
  afterWarmup?: () => Promise<void>;
  onRun?: (record: RunRecord) => void;
}): Promise<WorkloadReport> {
  const { gatewayUrl, workload, env } = opts;
  const events = new Map<RunRecord, readonly TimelineEvent[]>();
  const once = async (mode: 'on' | 'off'): Promise<RunRecord> => {
    const body = { ...workload.request(env), partial_execution: mode === 'on' };
    const timed = await timedStream(gatewayUrl, body);
    const timeline = (await (await fetch(`${gatewayUrl}/v1/requests/${timed.requestId}/timeline`)).json()) as { rounds: RoundSummary[]; events: TimelineEvent[] };
    const detection = workload.detection?.(timeline.events);
    const failedCalls = failedCallsIn(timeline.events);
    const record: RunRecord = { mode, totalMs: timed.totalMs, ttftMs: timed.ttftMs, rounds: timeline.rounds, ...(detection ? { detection } : {}), failedCalls };
    events.set(record, timeline.events);
    return record;
  };
  const pair = async (first: 'on' | 'off'): Promise<RunRecord[]> => {
    const second = first === 'on' ? 'off' : 'on';
    if (opts.concurrentPairs) return Promise.all([once(first), once(second)]);
    return [await once(first), await once(second)];
  };
  for (let i = 0; i < (opts.warmup ?? 1); i++) await pair('on');
  await opts.afterWarmup?.();
  const records: RunRecord[] = [];
  for (let i = 0; i < opts.runs; i++) {
    // Alternate which mode goes first so neither always follows the other.
    for (const record of await pair(i % 2 === 0 ? 'on' : 'off')) {
      records.push(record);
      opts.onRun?.(record);
    }
  }
  const examples = medianExamples(records, events);
  if (workload.detection) return detectionReport(workload, opts.runs, records, examples);
  const on = records.filter((r) => r.mode === 'on');
  const off = records.filter((r) => r.mode === 'off');
  const { generationMs, toolMs, boundMs, sequentialIdealMs, otherShapes, boundRuns } = roundFigures(records);
  const onSummary = summarize(on.map((r) => r.totalMs));
  const offSummary = summarize(off.map((r) => r.totalMs));
  return {
    workload: workload.name,
    description: workload.description,
    runs: opts.runs,
    on: onSummary,
    off: offSummary,
    improvementPct: ((offSummary.mean - onSummary.mean) / offSummary.mean) * 100,
    generationMs,
    toolMs,
    boundMs,
    sequentialIdealMs,
    boundAchieved: boundMs / onSummary.mean,
    metric: 'latency',
    failedCalls: failedCallsOf(records),
    ...(otherShapes > 0 ? { otherShapes } : {}),
    boundRuns,
    records,
    examples,
  };
}

/**
 * g_i, t_i and the bound from the runs of the typical shape: the number of rounds most sequential
 * runs took (t_i comes from those). A real model may take another round now and then; averaged in
 * by index, such a run's missing rounds counted as 0 ms and its answer round as a tool round,
 * which bent every figure and the bound. `otherShapes`: the runs left out (the report says so).
 */
export function roundFigures(records: readonly RunRecord[]): Pick<WorkloadReport, 'generationMs' | 'toolMs' | 'boundMs' | 'sequentialIdealMs' | 'boundRuns'> & { otherShapes: number } {
  const off = records.filter((r) => r.mode === 'off');
  const counts = new Map<number, number>();
  for (const r of off.length ? off : records) counts.set(r.rounds.length, (counts.get(r.rounds.length) ?? 0) + 1);
  // The most frequent; of two as frequent, the longer (the runs that did all the work).
  const roundCount = [...counts].reduce((best, next) => (next[1] > best[1] || (next[1] === best[1] && next[0] > best[0]) ? next : best))[0];
  const typical = records.filter((r) => r.rounds.length === roundCount);
  const generationMs = Array.from({ length: roundCount }, (_, i) => mean(typical.map((r) => r.rounds[i]!.generationMs)));
  const toolMs = Array.from({ length: roundCount - 1 }, (_, i) => mean(typical.filter((r) => r.mode === 'off').map((r) => r.rounds[i]!.toolMs)));
  const boundMs = toolMs.reduce((s, t, i) => s + Math.max(generationMs[i]!, t), 0) + generationMs[roundCount - 1]!;
  const sequentialIdealMs = toolMs.reduce((s, t, i) => s + generationMs[i]! + t, 0) + generationMs[roundCount - 1]!;
  const otherShapes = records.length - typical.length;
  const why = otherShapes > 0 ? `took another number of rounds than ${roundCount}, the number most sequential runs took` : null;
  return { generationMs, toolMs, boundMs, sequentialIdealMs, otherShapes, boundRuns: { used: typical.length, leftOut: otherShapes, why } };
}

/** What a run measured: its time to detect for a detection workload, else its latency. */
export function figureMs(record: RunRecord): number {
  return record.detection?.detectedMs ?? record.totalMs;
}

/**
 * Per mode, the events of the run whose figure (figureMs) is that mode's median (the lower one of
 * an even count). Sorted by latency, a detection workload's chart drew a run whose time to detect
 * was not the median the report gives.
 */
export function medianExamples(records: readonly RunRecord[], events: ReadonlyMap<RunRecord, readonly TimelineEvent[]>): Examples {
  const pick = (mode: 'on' | 'off') => {
    const runs = records.filter((r) => r.mode === mode).sort((a, b) => figureMs(a) - figureMs(b));
    const median = runs[Math.ceil(runs.length / 2) - 1];
    return median ? (events.get(median) ?? []) : [];
  };
  return { on: pick('on'), off: pick('off') };
}

/**
 * Validation-style workloads: the figure is the time until the gateway rejects the invalid call.
 * Its bound is the moment the invalid field was decoded (nothing can reject earlier).
 */
function detectionReport(workload: Workload, runs: number, records: RunRecord[], examples: Examples): WorkloadReport {
  const detected = (mode: 'on' | 'off') => records.filter((r) => r.mode === mode && r.detection).map((r) => r.detection!.detectedMs);
  // A real model may write a valid call, or none: then there is nothing to time, and what the user
  // can change is the model or its prompt, not the harness.
  const missing = (mode: 'on' | 'off') => records.filter((r) => r.mode === mode && !r.detection).length;
  if (missing('on') || missing('off')) {
    const of = (mode: 'on' | 'off') => `${missing(mode)} of ${records.filter((r) => r.mode === mode).length} ${mode} runs`;
    throw new Error(
      `${workload.name}: no call was rejected in ${of('on')} and ${of('off')}: the figure is the time to reject an invalid call, so the model must write one (bench/README.md, "Against a real vLLM")`,
    );
  }
  const on = summarize(detected('on'));
  const off = summarize(detected('off'));
  const onRuns = records.filter((r) => r.mode === 'on');
  const boundMs = mean(onRuns.map((r) => r.detection!.boundMs));
  return {
    workload: workload.name,
    description: workload.description,
    runs,
    on,
    off,
    improvementPct: ((off.mean - on.mean) / off.mean) * 100,
    generationMs: detectionGenerationMs(records),
    generationRuns: detectionRoundRuns(records),
    toolMs: [],
    boundMs,
    sequentialIdealMs: off.mean,
    boundAchieved: boundMs / on.mean,
    metric: 'detection',
    failedCalls: failedCallsOf(records),
    // Every run has its rejection (checked above): none is left out for a fault of its own.
    boundRuns: { used: onRuns.length, leftOut: 0, why: null },
    records,
    examples,
  };
}

/**
 * A detection workload's g_i: per round index, the mean over the sequential runs that reached that
 * round. A run cut short by its rejection has fewer rounds; counting its missing ones as 0 ms
 * dragged the later rounds' figures down.
 */
export function detectionGenerationMs(records: readonly RunRecord[]): number[] {
  const off = records.filter((r) => r.mode === 'off');
  const roundCount = Math.max(0, ...off.map((r) => r.rounds.length));
  return Array.from({ length: roundCount }, (_, i) => mean(off.flatMap((r) => (r.rounds[i] ? [r.rounds[i].generationMs] : []))));
}

/** The rounds of detectionGenerationMs that fewer than all sequential runs reached, and how many did. */
export function detectionRoundRuns(records: readonly RunRecord[]): Array<{ round: number } & BoundRuns> {
  const off = records.filter((r) => r.mode === 'off');
  return detectionGenerationMs(records).flatMap((_, i) => {
    const used = off.filter((r) => r.rounds[i]).length;
    return used < off.length ? [{ round: i + 1, used, leftOut: off.length - used, why: `ended before round ${i + 1}` }] : [];
  });
}

function failedCallsOf(records: readonly RunRecord[]): number {
  return records.reduce((n, r) => n + r.failedCalls, 0);
}

/** Calls that ended in an error, less the ones a tool rejected while they were decoded: a reject is a verdict, not a failure. */
function failedCallsIn(events: readonly TimelineEvent[]): number {
  const rejected = new Set(events.filter((e) => e.type === 'abort' && e.detail?.startsWith('rejected')).map((e) => e.callId));
  return events.filter((e) => e.type === 'tool-end' && e.detail === 'error' && !rejected.has(e.callId)).length;
}
