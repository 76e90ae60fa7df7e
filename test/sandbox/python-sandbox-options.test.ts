import { describe, expect, it } from 'vitest';
import { pythonLimitsSchema, resolvePythonSandboxOptions } from '../../sandbox/python-sandbox-options.ts';
import { ProcessPool } from '../../sandbox/runtimes/process-pool.ts';

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

// Review s48: CONVEYOR_SANDBOX=bwarp (or "off", "None") was read as 'auto' without a word, so an
// operator who meant to force a mode got whatever the machine allowed, none included.
describe('CONVEYOR_SANDBOX', () => {
  const withEnv = (value: string | undefined, run: () => unknown) => {
    const before = process.env['CONVEYOR_SANDBOX'];
    if (value === undefined) delete process.env['CONVEYOR_SANDBOX'];
    else process.env['CONVEYOR_SANDBOX'] = value;
    try {
      return run();
    } finally {
      if (before === undefined) delete process.env['CONVEYOR_SANDBOX'];
      else process.env['CONVEYOR_SANDBOX'] = before;
    }
  };

  it('takes bwrap, netns, none and auto; unset or empty is auto', () => {
    for (const mode of ['bwrap', 'netns', 'none', 'auto'] as const) expect(withEnv(mode, () => resolvePythonSandboxOptions().sandbox)).toBe(mode);
    expect(withEnv(undefined, () => resolvePythonSandboxOptions().sandbox)).toBe('auto');
    expect(withEnv('', () => resolvePythonSandboxOptions().sandbox)).toBe('auto');
    // An option given in code wins, and the variable is not read.
    expect(withEnv('bogus', () => resolvePythonSandboxOptions({ sandbox: 'none' }).sandbox)).toBe('none');
  });

  it('refuses any other value, naming the variable and the values it takes', () => {
    expect(() => withEnv('bwarp', () => resolvePythonSandboxOptions())).toThrow('CONVEYOR_SANDBOX must be one of bwrap, netns, none, auto; got "bwarp"');
    expect(() => withEnv('bwarp', () => new ProcessPool())).toThrow('CONVEYOR_SANDBOX must be one of bwrap, netns, none, auto; got "bwarp"');
  });
});
