import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript } from './python-test-helpers.ts';

/** What the zygote's pre-imports (numpy, matplotlib.pyplot) must not change for a cell that uses neither. */
let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox();
});

afterAll(async () => {
  await sandbox?.close();
});

describe('pre-imports leave no trace a script would not have', () => {
  it("a cell's first thread is Thread-1, as in a script (pyplot's font-cache Timer took number 1)", async () => {
    const source = "import threading\ndef work(): raise ValueError('w')\nt = threading.Thread(target=work); t.start(); t.join()\nprint(threading.Thread().name)\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toMatch(/^Exception in thread Thread-1 \(work\):\n/);
    expect(result.observation).toMatch(/\nThread-2\n$/);
  });
});
