import { describe, expect, it } from 'vitest';
import { pythonToolRunner } from './python-tool-runner.ts';

// What model-written code asks of the process it runs in, beyond its own statements; what the
// tool decided for each is in plugins/python/README.md.
const run = pythonToolRunner();

describe('python tool: the environment a cell runs in', () => {
  it('getpass.getuser() names the fixed sandbox user (it raised KeyError: no passwd entry for the uid, no $USER)', async () => {
    const result = await run("import getpass, os\nprint(getpass.getuser(), os.environ['USER'], os.environ['LOGNAME'])\n");
    expect(result).toMatchObject({ ok: true, content: 'sandbox sandbox sandbox\n' });
  });

  it('every cell of one sandbox has the same str hash seed, so a printed set of strings reads the same in each (README: hash seed)', async () => {
    const code = "import sys\nprint(sys.flags.hash_randomization, hash('conveyor'), list({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}))\n";
    const first = await run(code);
    const second = await run(code);
    expect(first.ok).toBe(true);
    expect(first.content).toMatch(/^1 -?\d+ \[/);
    expect(second.content).toBe(first.content);
  });

  // Under the sandbox's C.UTF-8 locale a script's stdout writes a surrogate-escaped byte back as
  // that byte; a cell's stdout was strict and raised UnicodeEncodeError at the first such print.
  it('prints a line read with errors="surrogateescape" as a script does (its stdout errors are the locale\'s)', async () => {
    const result = await run(
      "with open('data.txt', 'wb') as f:\n    f.write(b'caf\\xe9 au lait\\n')\n" +
        "with open('data.txt', errors='surrogateescape') as f:\n    for line in f:\n        print(line, end='')\n" +
        'import sys\nprint(sys.stdout.errors, sys.stderr.errors)\n',
    );
    expect(result).toMatchObject({ ok: true, content: 'caf\ufffd au lait\nsurrogateescape backslashreplace\n' });
  });

  // A spawn or forkserver child is a new interpreter that runs the main module again from its file
  // before it unpickles `f`; a cell's had none ("Can't get attribute 'f' on <module '__main__'
  // (built-in)>" in every worker, until the wall clock).
  it("multiprocessing's spawn and forkserver run a function defined in the cell", async () => {
    for (const method of ['spawn', 'forkserver']) {
      const result = await run(
        `import multiprocessing\ndef f(x):\n    return x * x\nif __name__ == '__main__':\n    with multiprocessing.get_context('${method}').Pool(2) as pool:\n        print(pool.map(f, range(5)))\n`,
      );
      expect(result, method).toMatchObject({ ok: true, content: '[0, 1, 4, 9, 16]\n' });
    }
  }, 120_000); // each worker is a new interpreter: seconds apiece at this host's slow hours

  it("a spawned child's traceback shows the cell's line, and only code that asks for __main__.__file__ finds the file", async () => {
    const failing = await run(
      "import multiprocessing\ndef f(x):\n    return 1 / x\nif __name__ == '__main__':\n    with multiprocessing.get_context('spawn').Pool(1) as pool:\n        pool.map(f, [0])\n",
    );
    expect(failing.ok).toBe(false);
    expect(failing.content).toContain('line 3, in f\n    return 1 / x\n');
    const listed = await run("import os, sys\nprint(os.listdir('.'))\nprint(os.path.basename(sys.modules['__main__'].__file__), os.listdir('.'))\n");
    expect(listed).toMatchObject({ ok: true, content: "[]\n<llm-cell> ['<llm-cell>']\n" });
  }, 120_000);
});
