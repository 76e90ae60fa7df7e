import { fixedDigits } from '../fixed-digits.ts';
import { percent as pct } from '../percent-format.ts';
import type { PhaseSummary } from './load-summary.ts';

export interface LoadMeta {
  command: string;
  date: string;
  node: string;
  profile: string;
  workload: string;
  arrivals: string;
  python: string;
}

const ms = (v: number) => fixedDigits(v, 0);
const f1 = (v: number) => fixedDigits(v, 1);
const f2 = (v: number) => fixedDigits(v, 2);

/** The Markdown report: latency per rate and mode, what the engine saw, and the gain. */
export function loadMarkdown(meta: LoadMeta, phases: readonly PhaseSummary[], maxNumSeqs: number): string {
  const lines = [
    `# Conveyor load benchmark — ${meta.date}`,
    '',
    `Command: \`${meta.command}\`  `,
    `Node ${meta.node}; upstream: simulator (separate process), profile ${meta.profile}; python: ${meta.python}  `,
    `Workload: ${meta.workload}  `,
    `Arrivals: ${meta.arrivals}`,
    '',
    '## Latency per rate and mode',
    '',
    '| rate (req/s) | mode | done / sent | completed/s | p50 (ms) | p90 (ms) | p99 (ms) | mean (ms) | TTFT p50 (ms) | g₁ (ms) | t (ms) | tool wait after decode (ms) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of phases) {
    for (const mode of ['off', 'on'] as const) {
      const m = p[mode];
      lines.push(
        `| ${f2(p.ratePerS)} | ${mode} | ${m.completed} / ${m.sent} | ${f2(m.completedPerS)} | ${ms(m.latencyMs.p50)} | ${ms(m.latencyMs.p90)} | ${ms(m.latencyMs.p99)} | ` +
          `${ms(m.latencyMs.mean)} | ${ms(m.ttftP50Ms)} | ${ms(m.g1Ms)} | ${ms(m.toolMs)} | ${ms(m.toolWaitAfterDecodeMs)} |`,
      );
    }
  }
  lines.push(
    '',
    '## What the engine saw, and the gain',
    '',
    `| rate (req/s) | completed/s (both) | mean batch (of ${maxNumSeqs}) | max batch | mean step (ms) | queued mean / max | sim slips | client late max (ms) | on vs off p50 | on vs off mean | saved at p50 (ms) |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const p of phases) {
    lines.push(
      `| ${f2(p.ratePerS)} | ${f2(p.completedPerS)} | ${f1(p.meanBatch)} | ${p.maxBatchSampled} | ${f1(p.meanStepMs)} | ${f1(p.meanWaiting)} / ${p.maxWaitingSampled} | ` +
        `${p.scheduleSlips} | ${ms(p.maxClientLateMs)} | ${pct(p.gainP50Pct)} | ${pct(p.gainMeanPct)} | ${ms(p.savedP50Ms)} |`,
    );
  }
  lines.push('', ...verdict(phases, maxNumSeqs), '', ...legend(), '');
  return lines.join('\n');
}

/** One sentence on the question the benchmark exists for, from the numbers of this run. */
function verdict(phases: readonly PhaseSummary[], maxNumSeqs: number): string[] {
  if (phases.length === 0) return [];
  const light = phases.reduce((a, b) => (b.meanBatch < a.meanBatch ? b : a));
  const heavy = phases.reduce((a, b) => (b.meanBatch > a.meanBatch ? b : a));
  const full = heavy.maxBatchSampled >= maxNumSeqs;
  const pays = heavy.savedP50Ms > 0 && heavy.gainMeanPct > 0;
  const lines = [
    `**Does overlap still pay under load?** At ${f2(heavy.ratePerS)} req/s the batch held ${f1(heavy.meanBatch)} sequences on average ` +
      `(${full ? `full at ${maxNumSeqs}, with up to ${heavy.maxWaitingSampled} requests queued` : `at most ${heavy.maxBatchSampled} of ${maxNumSeqs}`}; step ${f1(heavy.meanStepMs)} ms): ` +
      `partial execution ${pays ? 'still pays' : 'did not pay'}, p50 ${ms(heavy.off.latencyMs.p50)} → ${ms(heavy.on.latencyMs.p50)} ms (${pct(heavy.gainP50Pct)}, ${ms(heavy.savedP50Ms)} ms saved)` +
      (light === heavy ? '.' : `, against ${pct(light.gainP50Pct)} (${ms(light.savedP50Ms)} ms) at ${f2(light.ratePerS)} req/s.`),
  ];
  if (phases.some((p) => p.scheduleSlips > 0)) {
    lines.push('', 'Sim slips > 0: the simulator fell a whole step behind its schedule that many times (a busy machine); those steps ran late for on and off alike.');
  }
  return lines;
}

function legend(): string[] {
  return [
    'rate = offered Poisson arrival rate (exactly rate × duration arrivals per phase, Poisson-spaced). Each pair of consecutive arrivals holds one on and one off request, in seeded random order, so both modes share one load.',
    'latency = scheduled send → `data: [DONE]` (open loop: a late send counts against the request). completed/s = (completions − 1) / (first → last completion): the offered rate below saturation, the served rate at saturation.',
    // A quick run's handful of requests per mode and rate has its slowest as p90 and p99.
    "p50 / p90 / p99: nearest rank (no interpolation) over the mode's completed requests; with fewer than 100 of them p99 is the slowest.",
    'g₁ = decode time of round 1 (the code); t = tool time (first tool activity → result; in on runs the cell opens with the first line, so t spans the decode); tool wait after decode = how long round 1 waited for the tool once the code was decoded.',
    "on vs off = (off − on) / off, as the workloads' improvement: positive where partial execution was faster; saved at p50 = off p50 − on p50.",
    'mean batch = sequences per engine step over the phase (/sim/counters deltas); max batch and queued = sampled /sim/counters every 250 ms; mean step = simulated GPU time / steps.',
  ];
}
