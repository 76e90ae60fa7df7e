import { describe, expect, it } from 'vitest';
import { killedByOf, killedResult } from '../../sandbox/python-cell-result.ts';
import type { CellMessage } from '../../sandbox/python-ipc.ts';
import { DEFAULT_PYTHON_LIMITS } from '../../sandbox/python-sandbox-options.ts';

type ExitMessage = Extract<CellMessage, { t: 'exit' }>;

const limits = { ...DEFAULT_PYTHON_LIMITS, cpuSeconds: 10, memoryMb: 256 };

function sigkill(oomKills?: number | null): ExitMessage {
  return { t: 'exit', id: 'c', result: null, killed: null, status: { code: null, signal: 9 }, cpuSeconds: 0.1, ...(oomKills !== undefined ? { oomKills } : {}) };
}

const outcome = { output: 'before\n', unitsRun: 1, durationMs: 5, limits };

// A SIGKILL that no limit sent: the zygote counts the kernel's OOM kills while the cell ran.
describe('a SIGKILL no limit sent', () => {
  it('is out of memory when the OOM killer ran meanwhile, and says what else it could be', () => {
    expect(killedByOf(sigkill(1), limits)).toBe('memory');
    expect(killedResult('memory', outcome).observation).toBe(
      'before\n[execution stopped: the cell was killed (SIGKILL): out of memory (its limit is 256 MB), or a signal from its own code or another process]',
    );
  });

  it('is a plain signal when the OOM killer did not run', () => {
    expect(killedByOf(sigkill(0), limits)).toBeNull();
  });

  it('is either, said as such, when the count could not be read', () => {
    expect(killedByOf(sigkill(null), limits)).toBe('memory');
    expect(killedByOf(sigkill(), limits)).toBe('memory');
  });

  it('at the CPU hard limit is the CPU limit, whatever the count', () => {
    expect(killedByOf({ ...sigkill(0), cpuSeconds: 10 }, limits)).toBe('cpu');
  });
});
