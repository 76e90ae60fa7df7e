import { describe, expect, it } from 'vitest';
import { pingBlocks } from '../../../bench/runtimes/ping-blocks.ts';

const perMode = (blocks: ReturnType<typeof pingBlocks>) =>
  blocks.reduce<Record<string, number>>((n, b) => ({ ...n, [b.mode]: (n[b.mode] ?? 0) + b.pings }), {});

// `--pings N` is per mode; the blocks of 50 ran until 2N pings were reached, whatever the mode: with
// --pings 75 direct got 100 and deferred 50, with --pings 1 direct 50 and deferred none (NaN cells),
// while the report said "of N per cell".
describe('channel-deferral ping blocks', () => {
  it.each([1, 75, 120, 2000])('gives each mode exactly --pings %i round trips, in alternating blocks', (pings) => {
    const blocks = pingBlocks(pings, 50);
    expect(perMode(blocks)).toEqual({ direct: pings, deferred: pings });
    for (const [i, b] of blocks.entries()) {
      expect(b.pings).toBeGreaterThan(0);
      expect(b.pings).toBeLessThanOrEqual(50);
      if (i > 0) expect(b.mode).not.toBe(blocks[i - 1]!.mode);
    }
    expect(blocks[0]!.mode).toBe('direct');
  });
});
