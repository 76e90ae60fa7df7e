import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript } from './python-test-helpers.ts';

/**
 * The observation rule, checked over a committed corpus of real scripts: streaming a script in
 * one line at a time (each statement runs as soon as it is complete) must give the model exactly
 * what running the whole file at once gives it.
 */
const CORPUS = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'fixtures', 'python-corpus');
const scripts = readdirSync(CORPUS).filter((f) => f.endsWith('.py')).sort();

let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox();
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-corpus-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** `python -u script.py 2>&1`: what a person running the file in a terminal would see. */
function realRun(path: string, filename: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      '/bin/sh',
      ['-c', 'exec "$0" -u "$1" 2>&1 </dev/null', sandbox.python, path],
      {
        cwd: scratch,
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: scratch, MPLCONFIGDIR: join(scratch, '.mpl'), OPENBLAS_NUM_THREADS: '1', MPLBACKEND: 'Agg' },
        maxBuffer: 1 << 24,
      },
      (error, stdout) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve(stdout.split(path).join(filename));
      },
    );
  });
}

describe('incremental run equals whole-file run', () => {
  it('has a corpus of at least 50 scripts', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(50);
  });

  it.each(scripts)('%s', async (name) => {
    const source = readFileSync(join(CORPUS, name), 'utf8');
    const filename = `<llm-cell-${name}>`;
    const [incremental, whole, real] = await Promise.all([
      runScript(sandbox, source, { mode: 'incremental', filename }),
      runScript(sandbox, source, { mode: 'whole', filename }),
      realRun(join(CORPUS, name), filename),
    ]);
    // The baseline itself is faithful: the sandbox's whole mode prints what the interpreter does.
    expect(whole.result.observation).toBe(real);
    expect(incremental.result.killedBy).toBeUndefined();
    expect(whole.result.killedBy).toBeUndefined();
    expect(incremental.result.observation).toBe(whole.result.observation);
    expect(incremental.result.ok).toBe(whole.result.ok);
    expect(incremental.result.error?.type).toBe(whole.result.error?.type);
    expect(incremental.result.error?.compileError).toBe(whole.result.error?.compileError);
    if (name.includes('compile_error')) {
      // A whole-file run prints nothing but the compile error, even though the incremental run
      // had already executed (and streamed) the statements before it.
      expect(incremental.result.error?.compileError).toBe(true);
      expect(incremental.result.observation).toMatch(new RegExp(`^  File "${filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}", line \\d+\\n`));
      expect(incremental.result.unitsRun).toBeGreaterThan(0);
      expect(incremental.events.some((e) => e.type === 'output')).toBe(true);
    } else if (name.includes('runtime') || name.includes('assertion')) {
      expect(incremental.result.ok).toBe(false);
      expect(incremental.result.observation).toContain('Traceback (most recent call last):');
    }
  });
});

/** How a file run ended, as its parent sees it: a status, or the signal that killed it. */
interface ScriptEnd {
  output: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** `python -u name 2>&1` of `source` written (as UTF-8) to the scratch folder, and how it ended. */
function realRunOf(source: string, name: string, filename: string): Promise<ScriptEnd> {
  const path = join(scratch, name);
  writeFileSync(path, source);
  return new Promise((resolve, reject) => {
    execFile(
      '/bin/sh',
      ['-c', 'exec "$0" -u "$1" 2>&1 </dev/null', sandbox.python, path],
      { cwd: scratch, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: scratch } },
      (error, stdout) => {
        if (error && typeof error.code !== 'number' && !error.signal) reject(error);
        else resolve({ output: stdout.split(path).join(filename), code: error ? (typeof error.code === 'number' ? error.code : null) : 0, signal: error?.signal ?? null });
      },
    );
  });
}

/**
 * Texts the committed corpus cannot hold (a byte order mark, an end that is a signal): each is
 * written to a file and run by the interpreter, and the cell must print what that run prints and
 * end as it ends: `exitCode` is the status a shell shows (128 + N for death by signal N) and
 * `exitSignal` names that signal.
 */
const FILE_RUN_CASES: Record<string, string> = {
  // CPython re-raises SIGINT on itself after the traceback (Py_RunMain's exit_sigint); the cell said 1.
  'uncaught KeyboardInterrupt': "print('before')\nraise KeyboardInterrupt\n",
  'KeyboardInterrupt raised in a function': "def f():\n    raise KeyboardInterrupt('stop')\nf()\n",
  'KeyboardInterrupt subclass': 'class Stop(KeyboardInterrupt):\n    pass\nraise Stop\n',
  'KeyboardInterrupt caught': "try:\n    raise KeyboardInterrupt\nexcept KeyboardInterrupt:\n    print('caught')\n",
  'KeyboardInterrupt, then an excepthook that exits':
    "import sys\ndef hook(*args):\n    sys.exit(4)\nsys.excepthook = hook\nraise KeyboardInterrupt\n",
  'KeyboardInterrupt, then an excepthook that raises':
    "import sys\ndef hook(*args):\n    raise ValueError('hook')\nsys.excepthook = hook\nraise KeyboardInterrupt\n",
  // A process forked at the top level ends as a script would, so its parent sees death by SIGINT.
  'KeyboardInterrupt in a forked child':
    "import os\nif os.fork() == 0:\n    raise KeyboardInterrupt\nelse:\n    print(os.waitstatus_to_exitcode(os.wait()[1]))\n",
  // The tokenizer of a file run skips a leading UTF-8 byte order mark; compile() of a str
  // refused it ("invalid non-printable character U+FEFF").
  'a byte order mark': '\uFEFFprint("bom")\nimport sys\nprint(__doc__, sys.argv[0])\n',
  'a byte order mark, then a runtime error': '\uFEFFx = 1\n1/0\n',
  'a byte order mark, then a compile error': '\uFEFFx = 1\nx = = 2\n',
  // Line 1's text, as a file run reads it back from the file, starts with the mark.
  'a byte order mark, then a compile error on line 1': '\uFEFFx = "é" é\n',
  // The interpreter's own traceback printer reads line 1 from the file with the mark (and its
  // columns shift by it); Python's linecache, as the cell's, drops it.
  'a byte order mark, then a runtime error on line 1': '\uFEFF1/0\n',
  'a byte order mark, then a runtime error in a function on line 1': '\uFEFFf = lambda: 1/0; f()\n',
  'a byte order mark, then an excepthook that raises on line 1': '\uFEFFimport sys; sys.excepthook = lambda *a: 1/0; [][1]\n',
  // So do the interpreter's C printers of a thread's uncaught exception and of an "Exception
  // ignored" report; the cell's hooks printed line 1 without the mark.
  'a byte order mark, then a thread that raises on line 1':
    '\uFEFFimport threading; t = threading.Thread(target=lambda: 1/0); t.start(); t.join()\n',
  // (A __del__ that is an object with a repr: a function's would print its address.)
  'a byte order mark, then a __del__ that raises on line 1':
    '\uFEFFclass D: __repr__ = lambda s: "D"; __call__ = lambda s: 1/0\nclass A: __del__ = D()\nA()\n',
  'a byte order mark, then a runtime error printed by the code': "\uFEFFimport traceback\ntry: 1/0\nexcept Exception: traceback.print_exc()\n",
  // Only the printer's own thread reads line 1 with the mark: another thread that looked it up
  // while the traceback was being printed (here, from the exception's __str__) saw it too.
  'a byte order mark, then another thread reading line 1 while a traceback is printed':
    '\uFEFFimport atexit, linecache, threading\nseen = []\ndef look():\n    seen.append(linecache.getline(look.__code__.co_filename, 1))\n' +
    "class E(Exception):\n    def __str__(self):\n        if not seen:\n            t = threading.Thread(target=look); t.start(); t.join()\n        return 'e'\n" +
    'atexit.register(lambda: print(seen))\nraise E\n',
  'a byte order mark, then a docstring': '\uFEFF"doc"\nprint(__doc__)\n',
  'a byte order mark, then an indented line': '\uFEFF  x = 1\n',
  'a byte order mark, then an unterminated string': '\uFEFFx = "abc\n',
  // A file run shows the line the error is on, read from the file; compile() of a str showed
  // the logical line's first (line 1's text under "line 2").
  'a backslash continuation onto a blank line': 'x = 1 + \\\n\n',
  'a backslash continuation onto a blank line, then more': 'print(0)\nx = 1 + \\\n\nprint(x)\n',
  'a backslash continuation onto a bad line': 'x = 1 + \\\n  2 2\n',
  'a backslash continuation after non-ASCII text': 'é = 1 + \\\n  2 2\n',
  // A file run's parser counts columns in bytes of UTF-8, compile() of a str in characters.
  'a compile error after non-ASCII text': 'x = "é" é\n',
  'a compile error after non-ASCII text, continued': 'x = \\\n   "é" "a" é é\n',
  'a compile error in brackets after non-ASCII text': 'x = ("é",\n é é)\n',
  // Past the compiler's depth a file run prints only its RecursionError. The splitter's parse of
  // a statement's first line (R2) raised it out of the executor: no output, status 71.
  'an expression nested past the compiler\'s depth': `print(0)\nx = (\n${'1 +\n'.repeat(5000)}0)\n`,
  'a backslash continuation past the compiler\'s depth': `x = 0 \\\n${'+ 1 \\\n'.repeat(5000)}+ 0\nprint(x)\n`,
  'a one-line expression past the compiler\'s depth': `x = ${'1 + '.repeat(5000)}1\nprint(x)\n`,
  // Each statement's line numbers are the script's however many lines came before it: in its
  // traceback, its compiler warning, `co_firstlineno` and `inspect.getsource`.
  'a traceback deep in a long script': deepScript(),
  // A warning is shown once per place. The cell's parse of each statement marked the warning
  // filters changed (catch_warnings), which clears every record of warnings shown: it printed
  // again for each later statement.
  'a warning from a function that several statements call':
    "import warnings\ndef f():\n    warnings.warn('x')\nf()\nf()\nfor i in range(2):\n    f()\nglobal g\nf()\n",
  // The recursion limit is raised by the sandbox's frames under the main thread's module; a
  // thread, which has none, recursed that many frames deeper than a script's thread.
  'recursion depth in a thread and in the main thread':
    'import threading\ndef depth(n=1):\n    try:\n        return depth(n + 1)\n    except RecursionError:\n        return n\n' +
    'found = []\nt = threading.Thread(target=lambda: found.append(depth()))\nt.start(); t.join()\nprint(depth(), found)\n',
  'a thread that recurses without end':
    'import threading\ndef f():\n    f()\nt = threading.Thread(target=f)\nt.start(); t.join()\nprint("after")\n',
  // The same for a thread of `_thread.start_new_thread`, which threading's bootstrap does not run;
  // its uncaught exception is an "Exception ignored in thread started by" report naming the function.
  'recursion depth in a _thread.start_new_thread thread':
    'import _thread, time\ndef depth(n=1):\n    try:\n        return depth(n + 1)\n    except RecursionError:\n        return n\n' +
    'found = []\n_thread.start_new_thread(lambda: found.append(depth()), ())\nwhile not found:\n    time.sleep(0.001)\nprint(depth(), found)\n',
  'a _thread.start_new_thread thread that recurses without end':
    // (The hook is wrapped only to know when the report is printed; the object is repr'd, stable.)
    'import _thread, sys, time\ndone = []\ndef f():\n    f()\nclass Run:\n    def __repr__(self):\n        return "<run>"\n' +
    '    def __call__(self, x, y=0):\n        f()\nshow = sys.unraisablehook\ndef hook(u):\n    show(u)\n    done.append(u.object)\n' +
    'sys.unraisablehook = hook\n_thread.start_new_thread(Run(), (1,), {"y": 2})\nwhile not done:\n    time.sleep(0.001)\nprint("after", done)\n',
};

/** Code after 3,000 lines of statements, with what shows its line numbers. */
function deepScript(): string {
  const filler = Array.from({ length: 1500 }, (_, i) => `v${i} = ${i}\n`).join('');
  return [
    'import inspect\n',
    'def fail(n):\n    if n == 0:\n        raise ValueError("deep")\n    return fail(n - 1)\n',
    filler,
    '"a string after code"\n',
    '@(lambda f: f)\ndef g():\n    return 1\n',
    'class C:\n    """doc"""\n    def m(self):\n        return fail(2)\n',
    filler,
    'w = v1 is 1\n',
    'print(__doc__, g.__code__.co_firstlineno, C.m.__code__.co_firstlineno)\n',
    'print(inspect.getsource(g), inspect.getsource(C.m), end="")\n',
    'h = lambda: (1,\n  2, [][3])\n',
    'try: h()\nexcept IndexError as e: print(e.__traceback__.tb_next.tb_lineno)\n',
    'C().m()\n',
  ].join('');
}

describe('a file run of texts the corpus cannot hold', () => {
  it.each(Object.keys(FILE_RUN_CASES))('%s', async (name) => {
    const source = FILE_RUN_CASES[name]!;
    const filename = '<llm-cell>';
    const real = await realRunOf(source, `case-${Object.keys(FILE_RUN_CASES).indexOf(name)}.py`, filename);
    const signals: Record<string, number> = { SIGINT: 2 };
    const status = real.signal === null ? real.code : 128 + signals[real.signal]!;
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode, filename });
      expect(result.observation, mode).toBe(real.output);
      expect(result.exitCode, mode).toBe(status);
      expect(result.exitSignal, mode).toBe(real.signal ?? undefined);
      expect(result.ok, mode).toBe(status === 0);
    }
  });
});

/**
 * A NUL character in the text: what Python 3.12 and later print for such a file (checked with
 * 3.12.1 and 3.13.0), whichever interpreter runs the cell: the line it is on, shown up to it, and
 * nothing else (it wins over any other compile error). The cell printed compile()'s
 * `ValueError: source code string cannot contain null bytes`, with no line: a NUL the model
 * cannot see in its own text, and no word of where it is.
 */
const NUL_CASES: Record<string, [source: string, line: number, shown: string]> = {
  'after code on a line': ['x = 1\nprint(x)\0junk\nprint(2)\n', 2, 'print(x)'],
  'alone on the last line': ['print(1)\n\n\0', 3, ''],
  'after a compile error': ['x = = 1\n\0\n', 2, ''],
  'inside a function': ['def f():\n    return 1\0\nprint(f())\n', 2, 'return 1'],
};

describe('a NUL character in the text', () => {
  it.each(Object.keys(NUL_CASES))('%s', async (name) => {
    const [source, line, shown] = NUL_CASES[name]!;
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode, filename: '<llm-cell>' });
      expect(result.observation, mode).toBe(`  File "<llm-cell>", line ${line}\n    ${shown}\nSyntaxError: source code cannot contain null bytes\n`);
      expect(result.exitCode, mode).toBe(1);
      expect(result.error, mode).toMatchObject({ type: 'SyntaxError', lineno: line, compileError: true });
    }
  });
});
