import { encodeText } from '../../sim/mistral-tokenizer.ts';
import type { TimingProfile } from '../../sim/sim-server.ts';
import { sweepScenario } from './sweep-scenarios.ts';

/** Target t/g ratios: 10 points log-spaced from 0.05 to 20, as on the paper's Figure 8 axis. */
export const SWEEP_RATIOS: readonly number[] = Array.from({ length: 10 }, (_, k) => 0.05 * 400 ** (k / 9));
/** `--quick`: below, near and above the peak (t ≈ g − g0). */
export const QUICK_INDICES: readonly number[] = [2, 4, 7];

/**
 * g per point: long (400 ms) up to t/g ≈ 2.5, then shorter so that t = ratio × g stays ≤ 1 s —
 * down to the shortest call there is (a one-token payload, ~150 ms with 4 ms steps), since the
 * call's opening up to its first field (g0 ≈ 90 ms) is part of every g. The highest ratio thus
 * costs ~3 s a request; the whole sweep still fits in ~90 s.
 */
const G_MAX_MS = 400;
const T_CAP_MS = 1000;

export interface PlannedPoint {
  index: number;
  targetRatio: number;
  /** The sim scenario that decodes this point's call. */
  scenario: string;
  fillerTokens: number;
  /** The g the filler was sized for (below the shortest call for the highest ratios); the sweep measures the real one. */
  targetGMs: number;
}

/** The sweep's points: one scenario each, its filler sized so the call takes about the target g. */
export function sweepPlan(profile: TimingProfile): PlannedPoint[] {
  const stepMs = profile.decode.baseMs + profile.decode.perSeqMs;
  // Tokens of the call without filler, plus one step for the EOS token: the g of an empty payload.
  const emptyTokens = encodeText(replyText(sweepScenario('x', 0), '100')).length + 1;
  return SWEEP_RATIOS.map((targetRatio, index) => {
    const targetGMs = Math.min(G_MAX_MS, T_CAP_MS / targetRatio);
    const fillerTokens = Math.max(1, Math.round(targetGMs / stepMs - emptyTokens));
    return { index, targetRatio, scenario: `tg-sweep-${index}`, fillerTokens, targetGMs };
  });
}

function replyText(scenario: ReturnType<typeof sweepScenario>, ms: string): string {
  const reply = scenario.rules[0]!.reply;
  return (Array.isArray(reply) ? reply.join('\n') : reply).replace('{{last_user}}', ms);
}

export interface Prediction {
  /** Sequential: the tool starts once the call is decoded. */
  offMs: number;
  /** Partial execution: the tool starts when its first field closes (g0) and overlaps the rest. */
  onMs: number;
}

/**
 * Latency predicted for one round with one call followed by a short answer:
 * off = g + t + O, on = max(g, g0 + t) + O, where O is the request's fixed overhead outside
 * round 1 (HTTP, the answer round), measured separately, and the same in both modes.
 */
export function predictLatency(p: { gMs: number; g0Ms: number; tMs: number; overheadMs: number }): Prediction {
  return { offMs: p.gMs + p.tMs + p.overheadMs, onMs: Math.max(p.gMs, p.g0Ms + p.tMs) + p.overheadMs };
}

/** The textbook bound (g0 = 0, O = 0): speedup (g + t) / max(g, t) as a function of t/g. */
export function idealSpeedup(ratio: number): number {
  return (1 + ratio) / Math.max(1, ratio);
}
