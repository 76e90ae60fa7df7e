import { fixedDigits } from '../fixed-digits.ts';
import { fractionPercent as pct } from '../percent-format.ts';
import type { AffinityMode, ModeResult, ReplicasResult } from './run-replicas.ts';

const ms = (v: number) => fixedDigits(v, 1);
// No rounds at all (every conversation failed) leave no shares: an empty cell would look like a layout slip.
// (v) => pct(v): map's index would be taken for pct's digits (50% / 50.0%).
const shares = (xs: number[]) => (xs.length ? xs.map((v) => pct(v)).join(' / ') : '–');
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}×` : '–');

/** Where and from what a run was measured (bench/provenance.ts), with its command line. */
export interface ReplicasOrigin {
  command: string;
  /** ISO time the report was made. */
  date: string;
  node: string;
  commit: string;
  cpus: string;
  loadavg: number[];
}

/**
 * The side-by-side table: conversations kept on their replica vs spread round by round. With an
 * origin the command and where it ran go under the title, as in the other reports (run.ts wrote
 * them after the whole report).
 */
export function replicasMarkdown(meta: ReplicasResult['meta'], modes: Record<AffinityMode, ModeResult>, wallS: number, origin?: ReplicasOrigin): string {
  const { kept, spread } = modes;
  const row = (label: string, k: number, s: number, fmt: (v: number) => string, showRatio = true) =>
    `| ${label} | ${fmt(k)} | ${fmt(s)} | ${showRatio ? ratio(k, s) : ''} |`;
  return [
    '# Replicas: conversation affinity vs least-loaded per round',
    '',
    ...(origin
      ? [
          `Command: \`${origin.command}\`  `,
          `${origin.date}, Node ${origin.node}, commit ${origin.commit}; ${origin.cpus}, load average at the end ${origin.loadavg.join(' / ')}`,
          '',
        ]
      : []),
    `${meta.replicas} simulator replicas (profile \`${meta.profile}\`, prefix caching on) behind two gateways; ` +
      `${kept.conversations} + ${spread.conversations} conversations of two client turns (three tool rounds, then a follow-up that resends it all), each over its own document ` +
      `(~${meta.docTokens} tokens; ${meta.promptTokensPerConversation} prompt tokens per conversation over its rounds), ` +
      `Poisson arrivals at ${meta.ratePerS}/s, passes alternating kept / spread. Wall time ${wallS.toFixed(1)} s.`,
    '',
    '| | kept on its replica | spread (least loaded per round) | kept / spread |',
    '|---|---|---|---|',
    row('conversations on one replica', kept.oneReplicaShare, spread.oneReplicaShare, pct, false),
    `| rounds per replica | ${shares(kept.replicaShares)} | ${shares(spread.replicaShares)} | |`,
    row('prefix cache hit rate (prompt tokens)', kept.cacheHitRate, spread.cacheHitRate, pct),
    row('prompt tokens prefilled per conversation', kept.prefilledTokensPerConversation, spread.prefilledTokensPerConversation, (v) => fixedDigits(v, 0)),
    row('round 1 TTFT p50, ms (same for both)', kept.firstRoundTtftMs.p50, spread.firstRoundTtftMs.p50, ms),
    row('rounds 2–3 TTFT mean, ms', kept.laterRoundTtftMs.mean, spread.laterRoundTtftMs.mean, ms),
    row('rounds 2–3 TTFT p50, ms', kept.laterRoundTtftMs.p50, spread.laterRoundTtftMs.p50, ms),
    row('rounds 2–3 TTFT p99, ms', kept.laterRoundTtftMs.p99, spread.laterRoundTtftMs.p99, ms),
    row('first turn latency mean, ms', kept.e2eMs.mean, spread.e2eMs.mean, ms),
    row('first turn latency p50, ms', kept.e2eMs.p50, spread.e2eMs.p50, ms),
    row('first turn latency p99, ms', kept.e2eMs.p99, spread.e2eMs.p99, ms),
    row("next turn on the first turn's replica", kept.nextTurnSameReplicaShare, spread.nextTurnSameReplicaShare, pct, false),
    row('next turn TTFT mean, ms', kept.nextTurnTtftMs.mean, spread.nextTurnTtftMs.mean, ms),
    row('next turn TTFT p50, ms', kept.nextTurnTtftMs.p50, spread.nextTurnTtftMs.p50, ms),
    row('next turn TTFT p99, ms', kept.nextTurnTtftMs.p99, spread.nextTurnTtftMs.p99, ms),
    '',
  ].join('\n');
}
