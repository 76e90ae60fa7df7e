import { z } from 'zod';
import { startConveyor, type ConveyorOptions } from '../../gateway/start-conveyor.ts';
import type { TimelineEvent } from '../../gateway/timeline.ts';
import { mean, summarize, type Summary } from '../stats.ts';
import { timedStream } from '../stream-request.ts';
import { QUICK_INDICES, predictLatency, sweepPlan, type PlannedPoint } from './sweep-plan.ts';
import { sweepMarkdown, sweepSvg } from './sweep-report.ts';
import { SWEEP_PROFILE, sweepRequest, sweepScenario } from './sweep-scenarios.ts';
import { workTool } from './work-tool.ts';

export interface SweepPoint {
  /** Measured t/g of this point (the plan aimed at `targetRatio`). */
  ratio: number;
  targetRatio: number;
  /** Mean decode time of the tool-call round (round start → last token), both modes, ms. */
  g: number;
  /** g in the sequential and in the partial-execution runs: partial execution must not slow the decode. */
  gOff: number;
  gOn: number;
  /** Mean decode time up to the close of the call's first field (`ms`), ms. */
  g0: number;
  /** Mean tool time in the sequential runs, where the tool runs alone after the decode, ms. */
  t: number;
  offMs: number;
  onMs: number;
  off: Summary;
  on: Summary;
  predictedOffMs: number;
  predictedOnMs: number;
  /** |measured − predicted| / predicted of the speedup off/on, %. */
  errorPct: number;
  offErrorPct: number;
  onErrorPct: number;
  measuredSpeedup: number;
  predictedSpeedup: number;
}

export interface SweepResult {
  points: SweepPoint[];
  /** Fixed per-request overhead O (everything outside round 1), measured in calibration runs, ms. */
  overheadMs: number;
  runs: number;
  /** Requests in no point's figures: the warm-up ones, and one calibration request per point (t = 0: its g aims t, and they give O). */
  leftOut: SweepLeftOut;
  command: string;
  markdown: string;
  svg: string;
}

export interface SweepLeftOut {
  warmupRuns: number;
  calibrationRuns: number;
}

const optionsSchema = z.object({
  gatewayUrl: z.url().optional(),
  quick: z.boolean().default(false),
  runs: z.number().int().min(1).max(50).optional(),
  onProgress: z.custom<(done: number, total: number) => void>((v) => typeof v === 'function').optional(),
  /** Printed at the top of the Markdown; default: the standalone command for these options. */
  command: z.string().optional(),
});
export type SweepOptions = z.input<typeof optionsSchema>;

/**
 * What a gateway needs to serve the sweep: the `work` tool, the sweep's sim profile and its
 * scenarios, and no built-in tools. runSweep starts one itself unless given `gatewayUrl` (then
 * that gateway must have been started with these options).
 */
export function sweepConveyorOptions(): ConveyorOptions {
  return {
    gateway: { port: 0 },
    tools: [workTool],
    sim: { profile: SWEEP_PROFILE, scenarios: sweepPlan(SWEEP_PROFILE).map((p) => sweepScenario(p.scenario, p.fillerTokens)) },
    plugins: { python: false, search: false, calculator: false, database: false, local_news: false, plan: false, http_get: false },
  };
}

interface Run {
  totalMs: number;
  g: number;
  g0: number;
  toolMs: number;
  /** Everything outside round 1's decode and tool wait. */
  overheadMs: number;
}

/**
 * The t/g sweep (Conveyor, Figure 8): per point, a call whose decode takes g and whose tool
 * takes t, partial execution on and off in alternation; measured latency against the predicted
 * off = g + t + O and on = max(g, g0 + t) + O.
 */
export async function runSweep(options: SweepOptions = {}): Promise<SweepResult> {
  const o = optionsSchema.parse(options);
  const runs = o.runs ?? (o.quick ? 2 : 3);
  const plan = sweepPlan(SWEEP_PROFILE).filter((p) => !o.quick || QUICK_INDICES.includes(p.index));
  const command = o.command ?? `npx tsx bench/sweep/run.ts${o.quick ? ' --quick' : ''}${o.runs ? ` --runs ${o.runs}` : ''}`;
  const conveyor = o.gatewayUrl ? undefined : await startConveyor(sweepConveyorOptions());
  const url = o.gatewayUrl ?? conveyor!.gateway.url;
  const warmup = 2;
  const total = warmup + plan.length + plan.length * runs * 2;
  let done = 0;
  const once = async (point: PlannedPoint, toolMs: number, on: boolean): Promise<Run> => {
    const run = await measureOnce(url, point.scenario, toolMs, on);
    o.onProgress?.(++done, total);
    return run;
  };
  try {
    // JIT, sockets and the tokenizer's caches: the first requests are slower on both sides.
    await once(plan[0]!, 10, true);
    await once(plan[0]!, 10, false);
    // Calibration: a zero-time tool per point gives its g (to aim t = ratio × g) and samples O.
    const calibration: Run[] = [];
    for (const point of plan) calibration.push(await once(point, 0, false));
    const overheadMs = median(calibration.map((r) => r.overheadMs));
    const points: SweepPoint[] = [];
    for (const [i, point] of plan.entries()) {
      const toolMs = aimToolMs(point.targetRatio, calibration[i]!.g);
      const records: Array<Run & { mode: 'on' | 'off' }> = [];
      for (let k = 0; k < runs; k++) {
        // Alternate which mode goes first so neither always follows the other (as run-ab does).
        for (const on of k % 2 === 0 ? [true, false] : [false, true]) records.push({ ...(await once(point, toolMs, on)), mode: on ? 'on' : 'off' });
      }
      points.push(analysePoint(point, records, overheadMs));
    }
    const result = { points, overheadMs, runs, leftOut: { warmupRuns: warmup, calibrationRuns: calibration.length }, command };
    return { ...result, markdown: sweepMarkdown({ ...result, profile: SWEEP_PROFILE }), svg: sweepSvg(points) };
  } finally {
    await conveyor?.close();
  }
}

/**
 * t = ratio × g, where g was calibrated with `"ms":0`: every further digit of t is one more
 * Mistral token in the call, so one more decode step in g.
 */
function aimToolMs(ratio: number, calibratedG: number): number {
  const stepMs = SWEEP_PROFILE.decode.baseMs + SWEEP_PROFILE.decode.perSeqMs;
  let toolMs = ratio * calibratedG;
  for (let k = 0; k < 3; k++) toolMs = ratio * (calibratedG + (String(Math.round(toolMs)).length - 1) * stepMs);
  return Math.max(1, Math.round(toolMs));
}

function analysePoint(point: PlannedPoint, records: Array<Run & { mode: 'on' | 'off' }>, overheadMs: number): SweepPoint {
  const offRuns = records.filter((r) => r.mode === 'off');
  const onRuns = records.filter((r) => r.mode === 'on');
  const g = mean(records.map((r) => r.g));
  const g0 = mean(records.map((r) => r.g0));
  const t = mean(offRuns.map((r) => r.toolMs));
  const off = summarize(offRuns.map((r) => r.totalMs));
  const on = summarize(onRuns.map((r) => r.totalMs));
  // Each run is predicted from its own decode (g, g0): on a shared machine the sim's steps can
  // slip in one run and not the next, and that is the decode's time, not partial execution's.
  const predict = (r: Run) => predictLatency({ gMs: r.g, g0Ms: r.g0, tMs: t, overheadMs });
  const predicted = { offMs: mean(offRuns.map((r) => predict(r).offMs)), onMs: mean(onRuns.map((r) => predict(r).onMs)) };
  const measuredSpeedup = off.mean / on.mean;
  const predictedSpeedup = predicted.offMs / predicted.onMs;
  const relErr = (measured: number, expected: number) => (Math.abs(measured - expected) / expected) * 100;
  return {
    ratio: t / g,
    targetRatio: point.targetRatio,
    g,
    gOff: mean(offRuns.map((r) => r.g)),
    gOn: mean(onRuns.map((r) => r.g)),
    g0,
    t,
    offMs: off.mean,
    onMs: on.mean,
    off,
    on,
    predictedOffMs: predicted.offMs,
    predictedOnMs: predicted.onMs,
    errorPct: relErr(measuredSpeedup, predictedSpeedup),
    offErrorPct: relErr(off.mean, predicted.offMs),
    onErrorPct: relErr(on.mean, predicted.onMs),
    measuredSpeedup,
    predictedSpeedup,
  };
}

async function measureOnce(url: string, scenario: string, toolMs: number, on: boolean): Promise<Run> {
  const timed = await timedStream(url, sweepRequest(scenario, toolMs, on));
  const res = await fetch(`${url}/v1/requests/${timed.requestId}/timeline`);
  const timeline = (await res.json()) as { events: TimelineEvent[]; rounds: Array<{ round: number; generationMs: number; toolMs: number; toolWaitAfterDecodeMs: number }> };
  const round1 = timeline.rounds.find((r) => r.round === 1);
  const start = timeline.events.find((e) => e.type === 'round-start' && e.round === 1);
  const firstField = timeline.events.find((e) => e.type === 'piece' && e.round === 1 && e.detail === 'field ms');
  if (!round1 || !start || !firstField || timeline.rounds.length !== 2) {
    throw new Error(`sweep request ${timed.requestId} did not run one work call then an answer: ${JSON.stringify(timeline.rounds)}`);
  }
  return {
    totalMs: timed.totalMs,
    g: round1.generationMs,
    g0: firstField.t - start.t,
    toolMs: round1.toolMs,
    overheadMs: timed.totalMs - round1.generationMs - round1.toolWaitAfterDecodeMs,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
