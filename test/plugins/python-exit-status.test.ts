import { describe, expect, it } from 'vitest';
import { pythonToolRunner } from './python-tool-runner.ts';

// The model is shown a tool result's content, never its `ok`. A script that ended with a failing
// status but printed nothing telling (sys.exit(2) in a function, os._exit(3) after a print) read
// as "" or as plain output, exactly like a success; `sys.exit(True)` (the `sys.exit(not ok)`
// idiom) even came back ok, its report dropped for a bool where an int goes.
const run = pythonToolRunner();

describe('python tool: how a run ended is in the content', () => {
  it('notes a failing exit status that printed nothing', async () => {
    const result = await run('import sys\ndef main():\n    sys.exit(2)\nmain()\n');
    expect(result).toMatchObject({ ok: false, content: '[exit status 2]', data: { error: { type: 'SystemExit', message: '2' } } });
  });

  it('notes os._exit with a failing status after the output', async () => {
    expect(await run("import os\nprint('hi')\nos._exit(3)\n")).toMatchObject({ ok: false, content: 'hi\n[exit status 3]' });
  });

  it('sys.exit(True) fails with status 1, as in a script', async () => {
    const result = await run("import sys\nprint('checked')\nsys.exit(not False)\n");
    expect(result).toMatchObject({ ok: false, content: 'checked\n[exit status 1]', data: { error: { type: 'SystemExit', message: 'True' } } });
  });

  it('takes the status a script leaves its parent: 256 is success, past 64 bits is 255', async () => {
    expect(await run('import sys\nsys.exit(256)\n')).toMatchObject({ ok: true, content: '[no output]' });
    expect(await run('import sys\nsys.exit(10**400)\n')).toMatchObject({ ok: false, content: '[exit status 255]' });
    expect(await run('import sys\nsys.exit(-1)\n')).toMatchObject({ ok: false, content: '[exit status 255]' });
  });

  it('a message given to sys.exit is printed, then the status', async () => {
    expect(await run("import sys\nsys.exit('bad input')\n")).toMatchObject({ ok: false, content: 'bad input\n[exit status 1]' });
  });

  it('says when a successful run printed nothing (a bare last expression is not shown)', async () => {
    expect(await run('x = 6\nx * 7\n')).toMatchObject({ ok: true, content: '[no output]' });
    expect(await run("import sys\nprint('a')\nsys.exit(0)\n")).toMatchObject({ ok: true, content: 'a\n' });
  });

  it('says so when the code closed the sandbox pipes (fd 3 and 4), not a bare status 71', async () => {
    const result = await run("import os\nprint('a', flush=True)\nos.closerange(3, 256)\nprint('b')\n");
    expect(result).toMatchObject({
      ok: false,
      content: "a\n[execution stopped: the code closed the sandbox's pipes (fd 3 and 4 are the runner's): [Errno 9] Bad file descriptor]\n[exit status 71]",
    });
  });

  it('adds nothing to a traceback or a compile error, which say it themselves', async () => {
    const raised = await run("raise ValueError('v')\n");
    expect(raised.ok).toBe(false);
    expect(raised.content).toMatch(/ValueError: v\n$/);
    const compile = await run('def f(:\n');
    expect(compile.content).toMatch(/SyntaxError: invalid syntax\n$/);
  });
});
