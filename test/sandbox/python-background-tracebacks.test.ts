import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript, withoutAddresses } from './python-test-helpers.ts';

/**
 * Tracebacks printed by the interpreter's C code rather than by the cell's executor: a thread's
 * uncaught exception (before 3.13) and every "Exception ignored" report. That code reads source
 * lines from the file on disk, and a cell's code is in linecache only, so these tracebacks came
 * without the line under each of the cell's frames (`File "<llm-cell>", line 4, in w` and then
 * straight to `KeyError: 'b'`), where a script run shows it.
 */
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-bg-tb-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, [source: string, shows: string]> = {
  thread: [
    "import threading\ndef w():\n    x = {'a': 1}\n    return x['b']\nt = threading.Thread(target=w, name='worker'); t.start(); t.join()\nprint('after')\n",
    "    return x['b']\n",
  ],
  'del, generator close and atexit': [
    'class C:\n    def __del__(self):\n        raise RuntimeError()\nc = C()\ndel c\n' +
      "import atexit, json\ndef bad(): json.loads('{')\natexit.register(bad)\n" +
      "def gen():\n    try:\n        yield 1\n    finally:\n        raise ValueError('in finally')\ng = gen(); next(g); del g\nprint('end')\n",
    "    raise ValueError('in finally')\n",
  ],
  'sys.tracebacklimit': [
    "import sys\nsys.tracebacklimit = 1\ndef f(): raise KeyError('deep')\ndef g(): f()\nclass D:\n    def __del__(self): g()\nd = D(); del d\nsys.tracebacklimit = 0\nd = D(); del d\n",
    "    def f(): raise KeyError('deep')\n",
  ],
};

describe('tracebacks the interpreter prints itself show the cell source, as a script run does', () => {
  it.each(Object.keys(SCRIPTS))('%s', async (name) => {
    const [source, shows] = SCRIPTS[name]!;
    const filename = '<llm-cell>';
    const [{ result }, real] = await Promise.all([runScript(sandbox, source, { filename }), runAsScript(sandbox.python, scratch, `${name.replace(/\W+/g, '_')}.py`, source, filename)]);
    expect(result.observation).toContain(shows);
    expect(withoutAddresses(result.observation)).toBe(withoutAddresses(real));
    expect(result.ok).toBe(true);
  });

  it("gives the code's sys.unraisablehook a _thread function's own object and frames", async () => {
    // The sandbox runs such a function inside a wrapper of its own (cell_runtime._Deeper): the
    // code's hook got that wrapper as `object` and a dozen of the sandbox's frames before `f`.
    const source =
      "import sys, _thread, time, traceback\ndef f():\n    raise ValueError('x')\n" +
      "def hook(u):\n    print(u.object is f, type(u.object).__name__, u.err_msg)\n" +
      "    traceback.print_exception(u.exc_type, u.exc_value, u.exc_traceback)\n    raise KeyError('hook')\n" +
      'sys.unraisablehook = hook\n_thread.start_new_thread(f, ()); time.sleep(0.3)\n' +
      'sys.unraisablehook = None\n_thread.start_new_thread(f, ()); time.sleep(0.3)\n' +
      "_thread.start_new_thread(sys.exit, ()); time.sleep(0.3)\nprint('end')\n";
    const real = await runAsScript(sandbox.python, scratch, 'unraisable-hook.py', source, '<llm-cell>');
    expect(real).toMatch(/^True function Exception ignored in thread started by\nTraceback[^]*\nException ignored in sys.unraisablehook: <function hook/);
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(withoutAddresses(result.observation), mode).toBe(withoutAddresses(real));
    }
  });

  it('keeps a hook the cell set itself', async () => {
    const source =
      "import threading, sys\nthreading.excepthook = lambda a: print('mine', a.exc_type.__name__)\n" +
      "sys.unraisablehook = lambda u: print('mine too', u.exc_type.__name__)\n" +
      "t = threading.Thread(target=lambda: 1 / 0); t.start(); t.join()\nclass C:\n    def __del__(self): raise OSError\nc = C(); del c\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe('mine ZeroDivisionError\nmine too OSError\n');
  });
});
