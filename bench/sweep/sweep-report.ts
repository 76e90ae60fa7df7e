import type { TimingProfile } from '../../sim/sim-server.ts';
import { lineChart } from '../charts/svg-charts.ts';
import { percent as pct } from '../percent-format.ts';
import type { SweepLeftOut, SweepPoint } from './run-sweep.ts';
import { idealSpeedup } from './sweep-plan.ts';
import { fixedDigits } from '../fixed-digits.ts';

/** The target: every measured point within 10% of the predicted curve. */
export const SWEEP_TOLERANCE_PCT = 10;

const ms = (v: number) => fixedDigits(v, 1);
const x2 = (v: number) => fixedDigits(v, 3);

/** The sweep's Markdown: setup, one row per point, and whether every point met the target. */
export function sweepMarkdown(r: { points: SweepPoint[]; overheadMs: number; runs: number; command: string; profile: TimingProfile; leftOut: SweepLeftOut }): string {
  // A point missing a figure has a NaN error, which made Math.max() NaN: printed '–' beside "NOT every
  // point within", as if a point had missed the target. Those points are named apart; the rest judged.
  const errors = (p: SweepPoint) => [p.errorPct, p.onErrorPct, p.offErrorPct];
  const complete = r.points.filter((p) => errors(p).every(Number.isFinite));
  const lacking = r.points.filter((p) => !complete.includes(p));
  const worst = Math.max(...complete.flatMap(errors));
  const step = r.profile.decode.baseMs + r.profile.decode.perSeqMs;
  const lines = [
    `# t/g sweep (Conveyor Figure 8) — ${new Date().toISOString()}`,
    '',
    `Command: \`${r.command}\`  `,
    `Node ${process.version}; embedded simulator, profile \`${r.profile.name}\` (${step} ms per decode step); ${r.runs} runs per mode per point, on/off alternating.  `,
    `Fixed overhead O (everything outside round 1: HTTP, the answer round), measured in calibration runs: **${ms(r.overheadMs)} ms**.  `,
    `Left out of every point's figures: ${r.leftOut.warmupRuns} warm-up requests (JIT, sockets, the tokenizer's caches) and ${r.leftOut.calibrationRuns} calibration requests ` +
      '(one per point, with a zero-time tool: its g aims t, and together they give O).',
    '',
    '| target t/g | t/g | g (ms) | g0 (ms) | t (ms) | off mean ± std | predicted off | on mean ± std | predicted on | speedup measured | speedup predicted | error | off err | on err | textbook bound | error vs bound |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of r.points) {
    lines.push(
      `| ${x2(p.targetRatio)} | ${x2(p.ratio)} | ${ms(p.g)} | ${ms(p.g0)} | ${ms(p.t)} | ${ms(p.off.mean)} ± ${ms(p.off.std)} | ${ms(p.predictedOffMs)} | ` +
        `${ms(p.on.mean)} ± ${ms(p.on.std)} | ${ms(p.predictedOnMs)} | ${x2(p.measuredSpeedup)} | ${x2(p.predictedSpeedup)} | ${pct(p.errorPct)} | ${pct(p.offErrorPct)} | ${pct(p.onErrorPct)} | ` +
        `${x2(idealSpeedup(p.ratio))} | ${pct((Math.abs(p.measuredSpeedup - idealSpeedup(p.ratio)) / idealSpeedup(p.ratio)) * 100)} |`,
    );
  }
  lines.push(
    '',
    // With no points `worst` is Math.max() of nothing, -Infinity, which is "within" any target.
    ...verdict(r.points.length, complete.length, worst, lacking),
    '',
    'g = decode time of the tool-call round (round start → last token); g0 = decode time up to the close of the call\'s first field (`ms`),',
    'when partial execution starts the tool; t = tool time in the sequential runs. All three are read from each request\'s timeline.',
    'predicted off = g + t + O; predicted on = max(g, g0 + t) + O; speedup = off / on; error = |measured − predicted| / predicted.',
    'textbook bound = (g + t) / max(g, t), i.e. g0 = 0 and O = 0: the tool could start with the first token and nothing else costs time.',
    'Each run is predicted from its own g and g0; t is the mean tool time of the point\'s sequential runs.',
    '',
  );
  return lines.join('\n');
}

function verdict(points: number, complete: number, worst: number, lacking: SweepPoint[]): string[] {
  const target = `${SWEEP_TOLERANCE_PCT}% target`;
  // With no points `worst` is Math.max() of nothing, -Infinity, which is "within" any target.
  if (points === 0) return [`No points were measured: nothing to compare with the ${target}.`];
  if (lacking.length === 0) return [`Largest relative error (speedup, off or on latency): **${pct(worst)}** — ${worst <= SWEEP_TOLERANCE_PCT ? 'every point within' : 'NOT every point within'} the ${target}.`];
  const judged =
    complete === 0
      ? 'No point had every figure.'
      : `Largest relative error (speedup, off or on latency) of the ${complete} point${complete === 1 ? '' : 's'} with every figure: **${pct(worst)}** — ` +
        `${worst <= SWEEP_TOLERANCE_PCT ? 'within' : 'NOT every one within'} the ${target}.`;
  const named = lacking.map((p) => x2(p.targetRatio)).join(', ');
  return [judged, `${lacking.length} of ${points} points (target t/g ${named}) had a figure missing, so no error to compare: the target is not shown to hold for every point.`];
}

/** Speedup against t/g on a log axis: measured points, the predicted curve, the textbook bound. */
export function sweepSvg(points: SweepPoint[]): string {
  const sorted = [...points].sort((a, b) => a.ratio - b.ratio);
  const lo = Math.min(0.05, ...sorted.map((p) => p.ratio));
  const hi = Math.max(20, ...sorted.map((p) => p.ratio));
  const ideal = Array.from({ length: 61 }, (_, i) => lo * (hi / lo) ** (i / 60)).concat([1]);
  return lineChart({
    title: 'Partial execution speedup vs t/g (Conveyor Figure 8)',
    xLabel: 't / g  (tool time / decode time of the call)',
    yLabel: 'speedup = latency off / latency on',
    logX: true,
    series: [
      { label: 'bound (g+t) / max(g,t)', style: 'line', points: ideal.map((x) => ({ x, y: idealSpeedup(x) })) },
      { label: 'predicted, with g0 and O', style: 'line', points: sorted.map((p) => ({ x: p.ratio, y: p.predictedSpeedup })) },
      { label: 'measured', style: 'points', points: sorted.map((p) => ({ x: p.ratio, y: p.measuredSpeedup })) },
    ],
  });
}
