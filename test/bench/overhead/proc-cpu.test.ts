import { describe, expect, it } from 'vitest';
import { untilQuiet } from '../../../bench/overhead/proc-cpu.ts';

// runOverhead waits for every server to settle before its first level; when one never did, the
// wait ended after its timeout as if it had, and the start-up CPU was charged to the first
// level's tokens without a word in the report. untilQuiet now says which it was.
describe('untilQuiet', () => {
  it('says the process settled when its CPU stops growing', async () => {
    expect(await untilQuiet(() => 5, { windowMs: 5, timeoutMs: 1_000 })).toBe(true);
  });

  it('says it did not when it gives up, CPU still growing', async () => {
    let cpu = 0;
    expect(await untilQuiet(() => (cpu += 1_000), { windowMs: 5, timeoutMs: 20 })).toBe(false);
  });

  it('says it settled where no CPU figure can be read: nothing will be charged either', async () => {
    expect(await untilQuiet(() => Number.NaN, { windowMs: 5, timeoutMs: 20 })).toBe(true);
  });
});
