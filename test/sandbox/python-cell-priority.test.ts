import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript } from './python-test-helpers.ts';

/**
 * RLIMIT_CPU bounds each process of a cell, not the cell: a cell that forks its `maxProcesses`
 * spinners keeps every core busy for up to cpuSeconds each, and while the model is still writing
 * the wall clock does not run. Cells ran at the gateway's own priority, so the gateway's event
 * loop (every other request's tokens) competed with them as an equal; like plugin processes
 * (nice 5), a cell and what it starts now yield to it.
 */
let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
});

afterAll(async () => {
  await sandbox?.close();
});

describe('python cell CPU priority', () => {
  it('a cell and the processes it starts run at nice +5 from the gateway', async () => {
    const expected = Math.min(19, getPriority() + 5);
    const source =
      'import os, subprocess, sys\nprint(os.nice(0))\n' +
      "print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'], capture_output=True, text=True).stdout, end='')\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe(`${expected}\n${expected}\n`);
  });
});
