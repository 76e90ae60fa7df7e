import type { RoundSummary } from '../gateway/timeline.ts';
import { mean, summarize, type Summary } from './stats.ts';
import { timedStream } from './stream-request.ts';
import type { Workload, WorkloadEnv } from './workloads/workload.ts';

export interface RunRecord {
  mode: 'on' | 'off';
  totalMs: number;
  ttftMs: number;
  rounds: RoundSummary[];
}

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
  records: RunRecord[];
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
  onRun?: (record: RunRecord) => void;
}): Promise<WorkloadReport> {
  const { gatewayUrl, workload, env } = opts;
  const once = async (mode: 'on' | 'off'): Promise<RunRecord> => {
    const body = { ...workload.request(env), partial_execution: mode === 'on' };
    const timed = await timedStream(gatewayUrl, body);
    const timeline = (await (await fetch(`${gatewayUrl}/v1/requests/${timed.requestId}/timeline`)).json()) as { rounds: RoundSummary[] };
    return { mode, totalMs: timed.totalMs, ttftMs: timed.ttftMs, rounds: timeline.rounds };
  };
  for (let i = 0; i < (opts.warmup ?? 1); i++) {
    await once('on');
    await once('off');
  }
  const records: RunRecord[] = [];
  for (let i = 0; i < opts.runs; i++) {
    // Alternate which mode goes first so neither always follows the other.
    for (const mode of i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const record = await once(mode);
      records.push(record);
      opts.onRun?.(record);
    }
  }
  const on = records.filter((r) => r.mode === 'on');
  const off = records.filter((r) => r.mode === 'off');
  const roundCount = Math.max(...records.map((r) => r.rounds.length));
  const generationMs = Array.from({ length: roundCount }, (_, i) => mean(records.map((r) => r.rounds[i]?.generationMs ?? 0)));
  const toolMs = Array.from({ length: roundCount - 1 }, (_, i) => mean(off.map((r) => r.rounds[i]?.toolMs ?? 0)));
  const boundMs = toolMs.reduce((s, t, i) => s + Math.max(generationMs[i]!, t), 0) + generationMs[roundCount - 1]!;
  const sequentialIdealMs = toolMs.reduce((s, t, i) => s + generationMs[i]! + t, 0) + generationMs[roundCount - 1]!;
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
    records,
  };
}
