import { describe, expect, it } from 'vitest';
import { pythonLimitsSchema, resolvePythonSandboxOptions } from '../../sandbox/python-sandbox-options.ts';

// Node turns a setTimeout past 2^31-1 ms into 1 ms: a cell with wallClockMs 3e9 was killed at once,
// "the cell ran longer than 3000000000 ms".
describe('python sandbox options', () => {
  it('refuses a time limit longer than Node can time, naming the field', () => {
    expect(() => resolvePythonSandboxOptions({ limits: { wallClockMs: 3e9 } })).toThrow(/wallClockMs[\s\S]*must be at most 2147483647 ms/);
    expect(() => resolvePythonSandboxOptions({ startupTimeoutMs: 3e9 })).toThrow(/startupTimeoutMs[\s\S]*must be at most 2147483647 ms/);
    // A cell's own limits are checked by the same schema.
    expect(pythonLimitsSchema.safeParse({ wallClockMs: 2 ** 31 }).success).toBe(false);
  });

  it('takes the longest one Node can time', () => {
    expect(resolvePythonSandboxOptions({ limits: { wallClockMs: 2_147_483_647 }, startupTimeoutMs: 2_147_483_647 })).toMatchObject({ limits: { wallClockMs: 2_147_483_647 }, startupTimeoutMs: 2_147_483_647 });
  });
});
