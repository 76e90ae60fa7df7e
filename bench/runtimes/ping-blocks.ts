export type Mode = 'direct' | 'deferred';

/**
 * channel-deferral's schedule: `pings` round trips per mode, in blocks of at most `block`,
 * alternating direct and deferred (ABAB…) so drift on a noisy machine hits both. The last pair of
 * blocks is shorter where `pings` is not a multiple of `block`: each mode still gets exactly
 * `pings`, as the report says (blocks run until 2 × pings in all gave one mode a block more, and
 * with fewer than a block none to the other).
 */
export function pingBlocks(pings: number, block: number): Array<{ mode: Mode; pings: number }> {
  const blocks: Array<{ mode: Mode; pings: number }> = [];
  for (let done = 0; done < pings; done += block) {
    const size = Math.min(block, pings - done);
    blocks.push({ mode: 'direct', pings: size }, { mode: 'deferred', pings: size });
  }
  return blocks;
}
