/**
 * mulberry32: a tiny, well-mixed 32-bit PRNG. Math.random cannot be seeded, and a load run must
 * replay the same arrivals and the same on/off assignment when it is run again.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One exponential draw with the given rate (per unit of time): Poisson-process inter-arrival gap. */
export function exponential(random: () => number, rate: number): number {
  // 1 − u lies in (0, 1], so the logarithm is finite.
  return -Math.log(1 - random()) / rate;
}
