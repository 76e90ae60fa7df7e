import { exponential, seededRandom } from './seeded-random.ts';

export type Mode = 'on' | 'off';

export interface Arrival {
  index: number;
  /** When the request is sent, ms after the phase starts. */
  atMs: number;
  mode: Mode;
}

/**
 * round(ratePerS × durationS) Poisson arrivals over `durationS`, each tagged with partial
 * execution on or off.
 *
 * The count is fixed, not drawn: a Poisson process conditioned on n arrivals in [0, D] puts them
 * at the order statistics of n uniform points, whose spacings are n + 1 exponential gaps scaled
 * to sum to D. The bursts inside a phase are those of a Poisson process, but a 30 s phase does
 * not offer 0.5 req/s when 0.9 was asked (one seed in five does that with free counts).
 *
 * Modes come in randomised pairs (each consecutive pair holds one `on` and one `off`, in an
 * order a seeded coin picks): both modes get the same count and the same load, and neither is
 * systematically the first of a burst. A plain coin per arrival would leave 8 vs 4 in a short phase.
 */
export function arrivalSchedule(o: { ratePerS: number; durationS: number; seed: number }): Arrival[] {
  const random = seededRandom(o.seed);
  const n = Math.round(o.ratePerS * o.durationS);
  const gaps = Array.from({ length: n + 1 }, () => exponential(random, 1));
  const scale = (o.durationS * 1000) / gaps.reduce((s, g) => s + g, 0);
  const arrivals: Arrival[] = [];
  let pair: Mode[] = [];
  let t = 0;
  for (let index = 0; index < n; index++) {
    t += gaps[index]! * scale;
    if (pair.length === 0) pair = random() < 0.5 ? ['on', 'off'] : ['off', 'on'];
    arrivals.push({ index, atMs: t, mode: pair.shift()! });
  }
  return arrivals;
}
