import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RoundSummary } from '../../gateway/timeline.ts';
import { timedStream } from '../stream-request.ts';
import type { Arrival, Mode } from './arrival-schedule.ts';
import type { LoadSim, LoadSimCounters } from './load-sim.ts';

export interface LoadRecord {
  index: number;
  mode: Mode;
  /** Scheduled send time, ms after the phase start. */
  atMs: number;
  /** How late the client actually sent it (its event loop is shared with the gateway). */
  lateMs: number;
  /** Scheduled send → `data: [DONE]`, ms: lateness counts against the request, as in an open-loop client. */
  latencyMs: number;
  ttftMs: number;
  /** Completion time, ms after the phase start. */
  doneAtMs: number;
  rounds: RoundSummary[];
  /** sha256 of the streamed answer (first 16 hex): on and off must give the same one. */
  contentHash: string;
  error?: string;
}

export interface CounterSample {
  tMs: number;
  running: number;
  waiting: number;
}

export interface PhaseRun {
  ratePerS: number;
  durationS: number;
  records: LoadRecord[];
  /** Phase start → last completion, ms. */
  spanMs: number;
  before: LoadSimCounters;
  after: LoadSimCounters;
  samples: CounterSample[];
}

/**
 * One arrival rate: every request is sent at its scheduled time whether or not earlier ones have
 * finished (open loop, so a slow server cannot slow the arrivals down), then the phase waits for
 * all of them. The simulator's running/waiting counts are sampled meanwhile.
 */
export async function runPhase(o: {
  gatewayUrl: string;
  sim: LoadSim;
  request: Record<string, unknown>;
  ratePerS: number;
  durationS: number;
  arrivals: readonly Arrival[];
  sampleEveryMs?: number;
  onDone?: (record: LoadRecord) => void;
}): Promise<PhaseRun> {
  const before = await o.sim.counters();
  const t0 = performance.now();
  const samples: CounterSample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const c = await o.sim.counters();
      samples.push({ tMs: performance.now() - t0, running: c.running, waiting: c.waiting });
      await sleep(o.sampleEveryMs ?? 250);
    }
  })();

  const one = async (a: Arrival): Promise<LoadRecord> => {
    const sentAt = performance.now();
    const lateMs = sentAt - t0 - a.atMs;
    try {
      const timed = await timedStream(o.gatewayUrl, { ...o.request, partial_execution: a.mode === 'on' });
      const doneAtMs = performance.now() - t0;
      const timeline = (await (await fetch(`${o.gatewayUrl}/v1/requests/${timed.requestId}/timeline`)).json()) as { rounds?: RoundSummary[] };
      const record = { index: a.index, mode: a.mode, atMs: a.atMs, lateMs, latencyMs: doneAtMs - a.atMs, ttftMs: timed.ttftMs + lateMs, doneAtMs, rounds: timeline.rounds ?? [], contentHash: hash(timed.content) };
      o.onDone?.(record);
      return record;
    } catch (err) {
      const record = { index: a.index, mode: a.mode, atMs: a.atMs, lateMs, latencyMs: NaN, ttftMs: NaN, doneAtMs: performance.now() - t0, rounds: [], contentHash: '', error: String(err) };
      o.onDone?.(record);
      return record;
    }
  };

  const pending: Promise<LoadRecord>[] = [];
  for (const a of o.arrivals) {
    const wait = t0 + a.atMs - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(one(a));
  }
  const records = await Promise.all(pending);
  const spanMs = Math.max(o.durationS * 1000, ...records.map((r) => r.doneAtMs));
  sampling = false;
  await sampler;
  return { ratePerS: o.ratePerS, durationS: o.durationS, records, spanMs, before, after: await o.sim.counters(), samples };
}

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
