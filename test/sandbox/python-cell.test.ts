import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxError } from '../../core/errors.ts';
import { descendantPids, readProcessTable } from '../../sandbox/process-tree.ts';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { eventually, mergeOutput, ProgressRecorder, runScript, withoutCarets } from './python-test-helpers.ts';

let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox();
});

afterAll(async () => {
  await sandbox?.close();
});

describe('what the cell reports', () => {
  it("counts only the statements it ran: code writing fake statement reports to the cell's pipe gets none through", async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'forged-units', onProgress: recorder.listener });
    cell.pushLine('import os\n');
    cell.pushLine('for n in range(3):\n');
    // Spans of lines never sent, and a repeat of one already reported.
    cell.pushLine(`    os.write(3, b'{"t":"unit","a":90,"b":99}\\n{"t":"unit","a":1,"b":1}\\n')\n`);
    cell.pushLine("print('done')\n");
    const result = await cell.finish();
    expect(result).toMatchObject({ ok: true, observation: 'done\n', unitsRun: 3 });
    expect(recorder.events.filter((e) => e.type === 'unit-done')).toEqual([
      { type: 'unit-done', startLine: 1, endLine: 1 },
      { type: 'unit-done', startLine: 2, endLine: 3 },
      { type: 'unit-done', startLine: 4, endLine: 4 },
    ]);
  });
});

describe('line endings other than \\n', () => {
  // compile() turns \r\n and a lone \r into \n, and so does the cell; the reports of statements
  // on lines ended so were dropped as lines never sent (unitsRun 0), though the code ran.
  it('reports each statement, whether its lines end in \\r\\n or a lone \\r, a \\r\\n split across two pushes counting once', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'carriage-returns', onProgress: recorder.listener });
    cell.pushLine('a = 1\r');
    cell.pushLine('\nb = 2\r\n');
    cell.pushLine('for n in range(2):\r    a += n\r');
    cell.pushLine('print(a, b)\r');
    const result = await cell.finish();
    expect(result).toMatchObject({ ok: true, observation: '2 2\n', unitsRun: 4 });
    expect(recorder.events.filter((e) => e.type === 'unit-done')).toEqual([
      { type: 'unit-done', startLine: 1, endLine: 1 },
      { type: 'unit-done', startLine: 2, endLine: 2 },
      { type: 'unit-done', startLine: 3, endLine: 4 },
      { type: 'unit-done', startLine: 5, endLine: 5 },
    ]);
  });
});

describe('a top-level os.fork()', () => {
  // Regression: "A top-level os.fork() splits lines between parent and child". The child went back
  // to the executor loop and read the same pipe, so each later statement ran in whichever process
  // read it first ('0 True\n1 False\n2 True…'), and the child's reports passed for the cell's.
  it('a child that returns to the top level ends there; only the cell runs later statements', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'fork', onProgress: recorder.listener });
    cell.pushLine('import os\n');
    cell.pushLine('pid = os.fork()\n');
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20)); // both processes are waiting for the next line
      cell.pushLine(`print(${i}, pid == 0)\n`);
    }
    const result = await cell.finish();
    expect(result).toMatchObject({ ok: true, observation: '0 False\n1 False\n2 False\n3 False\n4 False\n', unitsRun: 7 });
  });

  it('the child still runs the rest of its own statement, and its exception is printed', async () => {
    const source =
      "import os\nif os.fork() == 0:\n    print('child', flush=True)\n    raise ValueError('in the child')\n" +
      "else:\n    _, status = os.wait()\n    print('parent', os.waitstatus_to_exitcode(status))\nprint('end')\n";
    const { result } = await runScript(sandbox, source);
    expect(result.ok).toBe(true);
    expect(withoutCarets(result.observation)).toBe(
      'child\nTraceback (most recent call last):\n  File "<llm-cell>", line 4, in <module>\n' +
        "    raise ValueError('in the child')\nValueError: in the child\nparent 1\nend\n",
    );
  });

  it("in whole mode the child runs the rest of the script, as in a script run, and its result is not the cell's", async () => {
    const source = "import os\npid = os.fork()\nif pid:\n    os.waitpid(pid, 0)\nprint('done', pid == 0)\n";
    const { result } = await runScript(sandbox, source, { mode: 'whole' });
    expect(result).toMatchObject({ ok: true, observation: 'done True\ndone False\n' });
  });
});

describe("the compiler's warnings", () => {
  it('are printed once, as a script run prints them, in either mode', async () => {
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, 'print("a")\ny = 1 is 1\nprint(y)\n', { mode });
      expect(result.ok).toBe(true);
      expect(result.observation.match(/SyntaxWarning/g)).toHaveLength(1);
    }
  });

  // The check whether a statement's first line is a whole simple statement parses that line too,
  // and the parser warns as it goes ('\\d' in a regex: SyntaxWarning from 3.12, DeprecationWarning
  // before); the header of a compound statement then warned twice, once from the check.
  it("are printed once for the first line of a compound statement (a regex's '\\d')", async () => {
    const source = "import re, warnings\nwarnings.simplefilter('always')\nfor m in re.finditer('\\d+', 'a1b22'):\n    print(m.group())\n";
    const { result } = await runScript(sandbox, source);
    expect(result.ok).toBe(true);
    expect(result.observation.match(/invalid escape sequence/g)).toHaveLength(1);
    expect(result.observation).toMatch(/\n1\n22\n$/);
  });

  // A statement is parsed alone and its tree moved down to its lines; one whose parse warns is
  // parsed again at its place, so the warning names the line it is on (and prints it) too.
  it("name the line they are on after 2,000 lines (a '\\d' in a simple and a compound statement)", async () => {
    const filler = Array.from({ length: 2000 }, (_, i) => `v${i} = ${i}\n`).join('');
    const source = `import re, warnings\nwarnings.simplefilter('always')\n${filler}s = '\\d'\nfor m in re.finditer('\\d+', 'a1'):\n    print(m.group())\n`;
    const { result } = await runScript(sandbox, source);
    expect(result.ok).toBe(true);
    expect(result.observation).toMatch(
      /^<llm-cell>:2003: \w+Warning: invalid escape sequence '\\d'\n {2}s = '\\d'\n<llm-cell>:2004: \w+Warning: invalid escape sequence '\\d'\n {2}for m in re\.finditer\('\\d\+', 'a1'\):\n1\n$/,
    );
  });

  // A module-level `global` (or a late `from __future__`) has the text so far compiled again to
  // find the errors only a whole module shows; that compile printed the earlier lines' warnings again.
  it('are printed once when a later statement has the text so far compiled again (a module-level global)', async () => {
    const { result } = await runScript(sandbox, 'print(1 is 1)\nglobal y\ny = 2\nprint(y)\n');
    expect(result.ok).toBe(true);
    expect(result.observation.match(/SyntaxWarning/g)).toHaveLength(1);
  });
});

describe('incremental execution', () => {
  it('runs the first statement and streams its output before later lines are sent', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'stream', onProgress: recorder.listener });
    cell.pushLine("print('first')\n");
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 1);
    recorder.mark('line 2 sent');
    cell.pushLine('for i in range(2):\n');
    cell.pushLine('    print(i)\n');
    recorder.mark('line 3 sent');
    cell.pushLine("print('last')");
    const result = await cell.finish();
    expect(result.ok).toBe(true);
    expect(result.observation).toBe('first\n0\n1\nlast\n');
    expect(result.unitsRun).toBe(3);
    expect(mergeOutput(recorder.events)).toEqual([
      { type: 'output', text: 'first\n' },
      { type: 'unit-done', startLine: 1, endLine: 1 },
      { type: 'marker', label: 'line 2 sent' },
      { type: 'marker', label: 'line 3 sent' },
      { type: 'output', text: '0\n1\n' },
      { type: 'unit-done', startLine: 2, endLine: 3 },
      { type: 'output', text: 'last\n' },
      { type: 'unit-done', startLine: 4, endLine: 4 },
    ]);
  });

  it('a whole-file compile error discards the partial effects from the observation', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'compile', onProgress: recorder.listener });
    cell.pushLine("print('side effect')\n");
    await recorder.waitFor((p) => p.type === 'unit-done');
    cell.pushLine('x = (\n');
    cell.pushLine('print(x)\n');
    const result = await cell.finish();
    // Streamed progress already showed the side effect; the observation must not.
    expect(mergeOutput(recorder.events)[0]).toEqual({ type: 'output', text: 'side effect\n' });
    expect(result.ok).toBe(false);
    expect(result.observation).toBe('  File "<llm-cell>", line 2\n    x = (\n        ^\nSyntaxError: \'(\' was never closed\n');
    expect(result.error).toEqual({ type: 'SyntaxError', message: "'(' was never closed", lineno: 2, compileError: true });
    expect(result.unitsRun).toBe(1);
  });

  it('a runtime exception stops the cell; later statements never run', async () => {
    const { result, events } = await runScript(sandbox, "print('a')\n1/0\nprint('b')\nimport sys; sys.stdout.write('never')\n");
    expect(result.ok).toBe(false);
    expect(result.unitsRun).toBe(1);
    expect(result.error).toMatchObject({ type: 'ZeroDivisionError', lineno: 2, compileError: false });
    expect(withoutCarets(result.observation)).toBe(
      'a\nTraceback (most recent call last):\n  File "<llm-cell>", line 2, in <module>\n    1/0\nZeroDivisionError: division by zero\n',
    );
    expect(events.filter((e) => e.type === 'unit-done')).toEqual([{ type: 'unit-done', startLine: 1, endLine: 1 }]);
  });

  it('a later SyntaxError wins over an earlier runtime error, as in a whole-file run', async () => {
    const { result } = await runScript(sandbox, "print('a')\n1/0\nprint('b'\n");
    expect(result.error?.compileError).toBe(true);
    expect(result.observation).toMatch(/^ {2}File "<llm-cell>", line 3\n/);
    expect(result.observation).not.toContain('ZeroDivisionError');
  });

  it('stdout and stderr are merged in program order', async () => {
    const source = "import sys\nprint('o1')\nprint('e1', file=sys.stderr)\nsys.stdout.write('o2 ')\nsys.stderr.write('e2\\n')\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe('o1\ne1\no2 e2\n');
  });

  it('"whole" mode runs everything at the end as one unit', async () => {
    const { result, events } = await runScript(sandbox, 'x = 2\nprint(x * 21)\n', { mode: 'whole' });
    expect(result).toMatchObject({ ok: true, observation: '42\n', unitsRun: 1 });
    expect(mergeOutput(events)).toEqual([
      { type: 'output', text: '42\n' },
      { type: 'unit-done', startLine: 1, endLine: 2 },
    ]);
  });

  it('empty source runs nothing and succeeds', async () => {
    const { result } = await runScript(sandbox, '');
    expect(result).toMatchObject({ ok: true, observation: '', unitsRun: 0 });
  });
});

describe('concurrency and isolation between cells', () => {
  it('runs three cells at once with independent namespaces', async () => {
    const recorders = [0, 1, 2].map(() => new ProgressRecorder());
    const cells = recorders.map((r, i) => sandbox.openCell({ id: `c${i}`, onProgress: r.listener }));
    cells.forEach((cell, i) => cell.pushLine(`x = ${i * 10}\n`));
    // All three have run their first statement before any receives its second line.
    await Promise.all(recorders.map((r) => r.waitFor((p) => p.type === 'unit-done')));
    cells.forEach((cell) => cell.pushLine('import os\n'));
    cells.forEach((cell) => cell.pushLine("print(x, 'y' in globals(), os.getpid() > 0)\n"));
    cells[0]?.pushLine('y = 1\n');
    const results = await Promise.all(cells.map((c) => c.finish()));
    expect(results.map((r) => r.observation)).toEqual(['0 False True\n', '10 False True\n', '20 False True\n']);
  });

  it('each cell gets its own process, working directory and RNG state', async () => {
    const source =
      // With per-cell namespaces every cell is PID 2 in /tmp, of its own PID namespace and its own directory.
      "import os, random, sys\nprint('%s:%d' % (os.readlink('/proc/self/ns/pid'), os.getpid()), '%s:%d' % (os.getcwd(), os.stat('.').st_ino), random.random())\n" +
      "np = sys.modules.get('numpy')\nprint(None if np is None else float(np.random.rand()))\n";
    const [a, b] = await Promise.all([runScript(sandbox, source), runScript(sandbox, source)]);
    const [pidA, cwdA, rndA] = a.result.observation.split('\n')[0]!.split(' ');
    const [pidB, cwdB, rndB] = b.result.observation.split('\n')[0]!.split(' ');
    expect(pidA).not.toBe(pidB);
    expect(cwdA).not.toBe(cwdB);
    expect(rndA).not.toBe(rndB);
    const numpyA = a.result.observation.split('\n')[1];
    const numpyB = b.result.observation.split('\n')[1];
    if (sandbox.protections().preImports.loaded.includes('numpy')) {
      expect(numpyA).not.toBe('None');
      expect(numpyA).not.toBe(numpyB); // numpy's global RNG is reseeded in every forked cell
    } else {
      expect([numpyA, numpyB]).toEqual(['None', 'None']);
    }
  });

  it('files written by one cell are invisible to the next', async () => {
    await runScript(sandbox, "open('note.txt', 'w').write('x')\n");
    const { result } = await runScript(sandbox, "import os\nprint(os.path.exists('note.txt'), os.listdir('.'))\n");
    expect(result.observation).toBe('False []\n');
  });
});

describe('failures stay with their cell', () => {
  it('a crashing cell is a tool error for that call only', async () => {
    const { result } = await runScript(sandbox, "print('before')\nimport os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n");
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe('SandboxError');
    expect(result.observation).toBe('before\n[the cell process died with signal 11 (SIGSEGV)]');
    // As a shell reports a script that died of a signal: 128 + N.
    expect(result).toMatchObject({ exitCode: 139, exitSignal: 'SIGSEGV' });
    const next = await runScript(sandbox, 'print(1)\n');
    expect(next.result.observation).toBe('1\n');
  });

  it('os._exit ends the cell with what it printed so far', async () => {
    const { result } = await runScript(sandbox, "import os\nprint('x', flush=True)\nos._exit(0)\nprint('y')\n");
    expect(result.observation).toBe('x\n');
  });

  it('a killed zygote fails its running cells and is restarted for the next cell', async () => {
    const recorder = new ProgressRecorder();
    const cell = sandbox.openCell({ id: 'victim', onProgress: recorder.listener });
    cell.pushLine("print('running')\n");
    await recorder.waitFor((p) => p.type === 'output');
    const zygotePid = sandbox.zygotePid();
    expect(zygotePid).not.toBeNull();
    process.kill(zygotePid as number, 'SIGKILL');
    const result = await cell.finish();
    expect(result.ok).toBe(false);
    expect(result.error?.type).toBe('SandboxError');
    const { result: next } = await runScript(sandbox, 'print(6 * 7)\n');
    expect(next).toMatchObject({ ok: true, observation: '42\n' });
    expect(sandbox.zygotePid()).not.toBe(zygotePid);
  });

  it('leaves no cell processes behind', async () => {
    expect(await eventually(() => sandbox.cellPids().length === 0)).toBe(true);
  });
});

describe('lifecycle', () => {
  it('close() kills running cells and leaves no process behind', async () => {
    const own = await startPythonSandbox({ preImports: [] });
    const zygotePid = own.zygotePid() as number;
    const recorder = new ProgressRecorder();
    const cell = own.openCell({ id: 'long', onProgress: recorder.listener });
    cell.pushLine("import subprocess, time\nsubprocess.Popen(['sleep', '60'])\n");
    cell.pushLine('time.sleep(60)\n');
    await recorder.waitFor((p) => p.type === 'unit-done' && p.startLine === 2);
    // Everything `own` runs: bwrap (when used) down to the zygote, its cell and the cell's `sleep`.
    const table = readProcessTable();
    const ours = [...descendantPids(process.pid, table)].filter((pid) => {
      for (let p: number | undefined = pid; p !== undefined && p !== process.pid; p = table.get(p)?.ppid) {
        if (p === zygotePid) return true;
      }
      return descendantPids(pid, table).includes(zygotePid);
    });
    expect(ours.length).toBeGreaterThanOrEqual(3);
    await own.close();
    expect((await cell.finish()).error?.type).toBe('SandboxError');
    const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && readProcessTable().get(pid)?.state !== 'Z';
    expect(await eventually(() => ours.every((pid) => !alive(pid)))).toBe(true);
    expect(() => own.openCell({ id: 'late' })).toThrow(SandboxError);
  });

  it('rejects with a SandboxError when no interpreter can be started', async () => {
    await expect(startPythonSandbox({ python: '/nonexistent/python3' })).rejects.toBeInstanceOf(SandboxError);
  });
});
