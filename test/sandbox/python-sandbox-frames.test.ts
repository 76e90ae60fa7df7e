import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript } from './python-test-helpers.ts';

/**
 * Code the sandbox runs on the cell's behalf (its stdout writer, its recursion-limit wrapper)
 * must not show in the cell's tracebacks: a script's stdout and `sys.setrecursionlimit` are C,
 * with no frame of their own. Before, an exception raised while the cell printed (a signal
 * handler's `TimeoutError`, the classic timeout, or an OSError of a closed stdout) showed
 * `File "/opt/conveyor-python/cell_runtime.py", line 31, in write` between the cell's frames,
 * and a refused `sys.setrecursionlimit` its wrapper's frame and the sandbox's inflated numbers.
 */
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-frames-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, string> = {
  'stdout closed under print': "import os, sys\nprint('a')\nos.close(1)\nprint('b', file=sys.stderr)\nprint('c')\n",
  'a str to sys.stdout.buffer': "import sys\nsys.stdout.buffer.write(b'bytes\\n')\nsys.stdout.buffer.write('text')\n",
  'setrecursionlimit refused': "import sys, traceback\nfor bad in (0, 2.5):\n    try:\n        sys.setrecursionlimit(bad)\n    except (ValueError, TypeError):\n        traceback.print_exc()\nsys.setrecursionlimit(1)\n",
  'setrecursionlimit too low in a function': 'import sys\ndef f(n):\n    if n == 0:\n        sys.setrecursionlimit(5)\n    else:\n        f(n - 1)\nf(10)\n',
};

describe('tracebacks show no frame of the sandbox', () => {
  it.each(Object.entries(SCRIPTS))('%s', async (name, source) => {
    const real = await runAsScript(sandbox.python, scratch, `${name.replace(/\W+/g, '_')}.py`, source, '<llm-cell>');
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, mode).not.toContain('conveyor-python');
      expect(result.observation, mode).toBe(real);
    }
  });

  // When the handler runs depends on timing (how many lines print first): only the traceback is
  // compared. Uncaught, so its printer drops the writer's frame also when the handler ran as the
  // writer started (before its own except can); caught and printed by the code, that case keeps it.
  it('a signal handler that raises while the cell prints', async () => {
    const source =
      "import signal\ndef on_alarm(signum, frame):\n    raise TimeoutError('too slow')\n" +
      "signal.signal(signal.SIGALRM, on_alarm)\nsignal.setitimer(signal.ITIMER_REAL, 0.05)\n" +
      "while True:\n    print('tick')\n";
    const real = await runAsScript(sandbox.python, scratch, 'alarm.py', source, '<llm-cell>');
    const { result } = await runScript(sandbox, source);
    // The handler may run between a line's text and its newline: 'tickTraceback (most recent…'.
    const tracebacks = (text: string): string =>
      text.split('\n').filter((line) => line !== 'tick').join('\n').replace(/^tick(?=Traceback)/gm, '');
    expect(result.observation).not.toContain('conveyor-python');
    expect(tracebacks(result.observation)).toBe(tracebacks(real));
    expect(result.exitCode).toBe(1);
  });
});
