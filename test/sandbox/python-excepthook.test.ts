import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript, withoutAddresses } from './python-test-helpers.ts';

/**
 * How an uncaught exception is printed when the code replaced what prints it. A `sys.excepthook`
 * that itself raised printed only the original traceback, so the hook's own bug went unseen (a
 * script prints "Error in sys.excepthook:", the hook's traceback, then "Original exception was:");
 * with `sys.stderr = None` a script prints no traceback, the cell printed it to stdout. With a
 * closed `sys.stderr` the executor itself failed: the model read only the output before, with no
 * word of the exception, and status 71 (a script dumps the exception, says "lost sys.stderr", 1).
 */
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-excepthook-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, string> = {
  'a hook that raises': "import sys\ndef hook(*args):\n    raise ValueError('hook broke')\nsys.excepthook = hook\nprint('before')\n1/0\n",
  'a hook that raises SystemExit': "import sys\ndef hook(*args):\n    print('in hook')\n    sys.exit(3)\nsys.excepthook = hook\n1/0\n",
  'a hook that works': "import sys\nsys.excepthook = lambda t, v, tb: print('hooked', t.__name__)\n1/0\n",
  'sys.stderr set to None': "import sys\nsys.stderr = None\nprint('a')\n1/0\n",
  // The interpreter's own sys.__excepthook__ reads source lines from disk: a hook that handed over
  // to it printed the cell's frames without their lines.
  'a hook that hands over to sys.__excepthook__':
    "import sys\ndef hook(t, v, tb):\n    print('custom')\n    sys.__excepthook__(t, v, tb)\nsys.excepthook = hook\ndef f():\n    return 1 / 0\nf()\n",
  'sys.excepthook called by the code':
    'import sys\nsys.excepthook(1, 2, 3)\ntry:\n    {}["k"]\nexcept KeyError:\n    sys.excepthook(*sys.exc_info())\nprint(sys.excepthook is sys.__excepthook__)\n',
};

describe('an uncaught exception, printed as the interpreter prints it', () => {
  it.each(Object.entries(SCRIPTS))('%s', async (_name, source) => {
    const real = await runAsScript(sandbox.python, scratch, 'hook.py', source, '<llm-cell>');
    const [incremental, whole] = await Promise.all([
      runScript(sandbox, source, { mode: 'incremental' }),
      runScript(sandbox, source, { mode: 'whole' }),
    ]);
    expect(incremental.result.observation).toBe(real);
    expect(whole.result.observation).toBe(real);
  });

  it('with sys.stderr closed, the exception is still named and the run ends with status 1', async () => {
    const source = "import sys\nsys.stderr.close()\nprint('a')\n1/0\n";
    const real = await runAsScript(sandbox.python, scratch, 'closed.py', source, '<llm-cell>');
    expect(real).toMatch(/^a\n[^]*ZeroDivisionError\('division by zero'\)\nlost sys.stderr\n$/);
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, mode).toBe("a\nobject type name: ZeroDivisionError\nobject repr     : ZeroDivisionError('division by zero')\nlost sys.stderr\n");
      expect(result.exitCode, mode).toBe(1);
      expect(result.error, mode).toMatchObject({ type: 'ZeroDivisionError', lineno: 4 });
    }
  });

  it('the exit status is the one a script leaves: 1, or the SystemExit code the hook raised', async () => {
    expect((await runScript(sandbox, SCRIPTS['a hook that raises']!)).result.exitCode).toBe(1);
    expect((await runScript(sandbox, SCRIPTS['a hook that raises SystemExit']!)).result.exitCode).toBe(3);
  });
});

/**
 * The cell's report of an uncaught exception (and of `sys.exit(obj)`) took the exception's text with
 * a second `str()`, after the traceback's: an exception whose `__str__` counts, logs or is slow ran
 * it twice, where a script runs it once. The count is printed by an atexit handler, after both.
 */
describe("an uncaught exception's __str__", () => {
  const COUNTED = "import atexit\ncalls = []\natexit.register(lambda: print('__str__ ran', len(calls)))\nclass Loud:\n    def __str__(self):\n        calls.append(1)\n        return 'loud'\n";
  const CASES: Record<string, [string, string]> = {
    'raised': [`${COUNTED}class E(Loud, Exception):\n    pass\nraise E()\n`, 'loud'],
    'given to sys.exit': [`${COUNTED}import sys\nsys.exit(Loud())\n`, 'loud'],
  };

  it.each(Object.entries(CASES))('runs once when %s (ran twice: printed, then again for the report)', async (name, [source, message]) => {
    const real = await runAsScript(sandbox.python, scratch, 'str-once.py', source, '<llm-cell>');
    expect(real).toMatch(/__str__ ran 1\n$/);
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, `${name} ${mode}`).toBe(real);
      expect(result.error, `${name} ${mode}`).toMatchObject({ message });
      expect(result.exitCode, `${name} ${mode}`).toBe(1);
    }
  });

  it("that raises is called once and reported as the traceback shows it", async () => {
    const source = `${COUNTED}class E(Exception):\n    def __str__(self):\n        calls.append(1)\n        raise RuntimeError\nraise E()\n`;
    const real = await runAsScript(sandbox.python, scratch, 'str-fails.py', source, '<llm-cell>');
    expect(real).toMatch(/E: <exception str\(\) failed>\n__str__ ran 1\n$/);
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe(real);
    expect(result.error).toMatchObject({ type: 'E', message: '<exception str() failed>' });
  });
});

/**
 * A `__str__` that prints, as a script's interpreter calls it. Before 3.13 its C printer writes the
 * traceback and the type's name first, then calls `__str__` (`E` + the print + `: msg`), for each
 * exception of a chain, a thread's and an "Exception ignored" report's (there after `E: `); the cell
 * called them all first, so their prints came before "Traceback". With the code's own
 * `sys.excepthook`, or `sys.stderr = None`, a script never calls it; the cell's report did.
 */
describe('a __str__ that prints', () => {
  const LOUD = "import sys, threading\nclass E(Exception):\n    def __str__(self):\n        print('__str__ of', self.args)\n        return 'msg'\n";
  const CASES: Record<string, [source: string, message: string]> = {
    'a chain': [`${LOUD}def f():\n    raise E(1)\ntry:\n    f()\nexcept E as e:\n    raise E(2) from e\n`, 'msg'],
    'a thread and a __del__': [
      `${LOUD}def w():\n    raise E('thread')\nt = threading.Thread(target=w, name='w'); t.start(); t.join()\n` +
        "class C:\n    def __del__(self):\n        raise E('del')\nc = C(); del c\ne = E('noted'); e.add_note('a note')\nraise e\n",
      'msg',
    ],
    'the code\'s own excepthook': [`${LOUD}sys.excepthook = lambda t, v, tb: print('hooked', t.__name__)\nraise E()\n`, ''],
    'sys.stderr set to None': [`${LOUD}sys.stderr = None\nraise E()\n`, ''],
    'a failing excepthook': [`${LOUD}def hook(*a):\n    raise E('hook')\nsys.excepthook = hook\nraise E('original')\n`, 'msg'],
  };

  it.each(Object.entries(CASES))('runs where a script runs it: %s', async (name, [source, message]) => {
    const real = await runAsScript(sandbox.python, scratch, 'loud-str.py', source, '<llm-cell>');
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(withoutAddresses(result.observation), `${name} ${mode}`).toBe(withoutAddresses(real));
      expect(result.error, `${name} ${mode}`).toMatchObject({ type: 'E', message });
    }
  });

  it("is not called for the report where nothing printed the exception, but a built-in's text is kept", async () => {
    const real = await runAsScript(sandbox.python, scratch, 'quiet.py', SCRIPTS['sys.stderr set to None']!, '<llm-cell>');
    expect(real).toBe('a\n');
    const { result } = await runScript(sandbox, SCRIPTS['sys.stderr set to None']!);
    expect(result.observation).toBe(real);
    expect(result.error).toMatchObject({ type: 'ZeroDivisionError', message: 'division by zero', lineno: 4 });
  });
});

/**
 * `sys.tracebacklimit`, as the interpreter's printer (3.11, 3.12: C) reads it: the last N frames of
 * each traceback, where the traceback module the cell printed with kept the first N (a chain under
 * `sys.tracebacklimit = 1` showed the frames that called, not those that raised), and every frame
 * for a limit that is no int (the module failed on `1.5`, and the cell fell back to its dump).
 */
describe('sys.tracebacklimit', () => {
  const CASES: Record<string, string> = {
    'a chain under 1': 'import sys\nsys.tracebacklimit = 1\ndef g(): raise KeyError(1)\ndef f():\n    try:\n        g()\n    except KeyError:\n        raise ValueError("v")\nf()\n',
    'a thread under 1': 'import sys, threading\nsys.tracebacklimit = 1\ndef g(): raise KeyError(1)\nt = threading.Thread(target=lambda: g()); t.start(); t.join()\nprint("after")\n',
    'a float': 'import sys\nsys.tracebacklimit = 1.5\ndef f():\n    raise ValueError("x")\nf()\n',
  };

  it.each(Object.entries(CASES))('%s', async (name, source) => {
    const real = await runAsScript(sandbox.python, scratch, 'limit.py', source, '<llm-cell>');
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, `${name} ${mode}`).toBe(real);
    }
  });
});
