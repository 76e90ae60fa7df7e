import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript, withoutCarets } from './python-test-helpers.ts';

/**
 * The statement splitter (research note §1.2): which lines run together, and on the arrival of
 * which line. `at` is the line whose arrival released the unit; 0 means the end of the stream.
 */
interface SplitUnit {
  start: number;
  end: number;
  at: number;
}

interface SplitCase {
  name: string;
  source: string;
  eager?: boolean;
  units: SplitUnit[];
}

const u = (start: number, end: number, at: number): SplitUnit => ({ start, end, at });

const CASES: SplitCase[] = [
  {
    name: 'if/else across blank lines and a column-0 comment',
    source: "x = 3\nif x > 5:\n    print('big')\n\n# a column-0 comment\n\nelse:\n    print('small')\nprint('done')\n",
    units: [u(1, 1, 1), u(2, 8, 9), u(9, 9, 9)],
  },
  {
    name: 'if/elif/else',
    source: 'if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\nz = 1\n',
    units: [u(1, 6, 7), u(7, 7, 7)],
  },
  {
    name: 'try/except/else/finally',
    source: "try:\n    x = 1\nexcept ValueError:\n    pass\n\nexcept* TypeError:\n    pass\nelse:\n    pass\nfinally:\n    print('f')\nprint('after')\n",
    units: [u(1, 11, 12), u(12, 12, 12)],
  },
  {
    name: 'decorators with blank lines and comments before def',
    source: 'import functools\n@functools.lru_cache(maxsize=None)\n\n# comment\n@other\ndef fib(n):\n    return n\nprint(fib(3))\n',
    units: [u(1, 1, 1), u(2, 7, 8), u(8, 8, 8)],
  },
  {
    name: 'triple-quoted string holding column-0 if/else/@ text',
    source: 's = """\nif True:\nelse:\n@decorator\n"""\nprint(len(s))\n',
    units: [u(1, 5, 5), u(6, 6, 6)],
  },
  {
    name: 'backslash continuation onto column 0',
    source: 'total = 1 + \\\n2\nprint(total)\n',
    units: [u(1, 2, 2), u(3, 3, 3)],
  },
  {
    name: 'open brackets with column-0 content',
    source: 'data = [\n1, 2,\n3,\n]\nprint(sum(data))\n',
    units: [u(1, 4, 4), u(5, 5, 5)],
  },
  {
    name: 'CRLF line endings',
    source: "a = 1\r\nif a:\r\n    print('a')\r\nprint('b')\r\n",
    units: [u(1, 1, 1), u(2, 3, 4), u(4, 4, 4)],
  },
  {
    name: 'form feed at the start of a line',
    source: 'x = 1\n\fprint(x)\n',
    units: [u(1, 1, 1), u(2, 2, 2)],
  },
  {
    name: 'trailing line without a newline runs at the end',
    source: "for i in range(2):\n    print(i)\nprint('end')",
    units: [u(1, 2, 0), u(3, 3, 0)],
  },
  {
    name: 'a compound statement waits for the next column-0 line (R1 only)',
    source: 'x = 1\ndef f():\n    return x\n\n\ny = f()\n',
    eager: false,
    units: [u(1, 1, 2), u(2, 5, 6), u(6, 6, 0)],
  },
  {
    name: 'comment ending in a backslash, and a string with a hash',
    source: "# comment \\\nx = '#' # trailing \\\nprint(x)\n",
    units: [u(1, 2, 2), u(3, 3, 3)],
  },
  {
    name: 'nested f-string replacement fields and format spec',
    source: 'w = 5\nx = f"{1:{w}}|{\'a\' + \'b\'}"\nprint(x)\n',
    units: [u(1, 1, 1), u(2, 2, 2), u(3, 3, 3)],
  },
  {
    name: 'match/case is one statement; "match" as a name is a simple statement',
    source: 'match = 5\nmatch match:\n    case 5:\n        pass\n    case _:\n        pass\nprint(match)\n',
    units: [u(1, 1, 1), u(2, 6, 7), u(7, 7, 7)],
  },
  {
    name: 'semicolons keep simple statements together',
    source: 'a = 1; b = 2\nprint(a + b)\n',
    units: [u(1, 1, 1), u(2, 2, 2)],
  },
  {
    name: 'comment-only input runs nothing',
    source: '# nothing\n\n   # here\n',
    units: [],
  },
];

function pythonForHarness(): string {
  return process.env['CONVEYOR_PYTHON'] ?? '/usr/bin/python3';
}

function split(cases: SplitCase[]): Promise<SplitUnit[][]> {
  const harness = join(fileURLToPath(new URL('.', import.meta.url)), 'split-harness.py');
  return new Promise((resolve, reject) => {
    const child = execFile(pythonForHarness(), ['-B', harness], (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as SplitUnit[][]);
    });
    child.stdin?.end(JSON.stringify(cases.map((c) => ({ source: c.source, eager: c.eager ?? true }))));
  });
}

let sandbox: PythonSandbox;
let splits: SplitUnit[][];

beforeAll(async () => {
  [sandbox, splits] = await Promise.all([startPythonSandbox({ preImports: [] }), split(CASES)]);
});

afterAll(async () => {
  await sandbox?.close();
});

describe('statement splitter', () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, index) => {
    expect(splits[index]).toEqual(CASES[index]?.units);
  });
});

/** Each snippet runs line by line and as a whole file; the observations must be identical. */
const EXECUTION_CASES: Array<{ name: string; source: string; observation?: string; ok?: boolean }> = [
  ...CASES.filter((c) => !c.source.includes('pass\nelif') && !c.name.includes('try')).map((c) => ({ name: c.name, source: c.source })),
  {
    name: 'a later bare string does not replace __doc__',
    source: '"""Module doc."""\nx = 1\n"""not a doc"""\nprint(__doc__)\n',
    observation: 'Module doc.\n',
  },
  {
    name: 'global after assignment is the whole-file SyntaxError, nothing else',
    source: "x = 1\nprint('side effect')\nglobal x\nprint('never')\n",
    observation: '  File "<llm-cell>", line 3\n    global x\n    ^^^^^^^^\nSyntaxError: name \'x\' is assigned to before global declaration\n',
    ok: false,
  },
  {
    name: 'late from __future__ import is the whole-file SyntaxError',
    source: "import os\nprint('side effect')\nfrom __future__ import annotations\n",
    observation: '  File "<llm-cell>", line 3\n    from __future__ import annotations\n    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nSyntaxError: from __future__ imports must occur at the beginning of the file\n',
    ok: false,
  },
  {
    name: 'future flags carry from unit to unit',
    source: '"""doc"""\nfrom __future__ import annotations\ndef f(x: Undefined) -> int:\n    return 1\nprint(f.__annotations__)\n',
    observation: "{'x': 'Undefined', 'return': 'int'}\n",
  },
  {
    name: 'return outside a function after output',
    source: "print('ran')\nreturn 5\n",
    observation: '  File "<llm-cell>", line 2\n    return 5\n    ^^^^^^^^\nSyntaxError: \'return\' outside function\n',
    ok: false,
  },
  {
    name: 'top-level await is a SyntaxError, as in a script',
    source: 'import asyncio\nawait asyncio.sleep(0)\n',
    ok: false,
  },
  {
    name: 'runtime error: traceback with cell line numbers, no executor frames',
    source: "def f(d):\n    return d['k']\n\nprint('before')\nf({})\nprint('after')\n",
    observation:
      'before\nTraceback (most recent call last):\n  File "<llm-cell>", line 5, in <module>\n    f({})\n  File "<llm-cell>", line 2, in f\n    return d[\'k\']\n           ~^^^^^\nKeyError: \'k\'\n',
    ok: false,
  },
  {
    name: 'sys.exit midway stops the cell',
    source: "import sys\nprint(1)\nsys.exit('bye')\nprint(2)\n",
    observation: '1\nbye\n',
    ok: false,
  },
  { name: 'sys.exit(0) is success', source: 'import sys\nprint(1)\nsys.exit(0)\nprint(2)\n', observation: '1\n', ok: true },
  {
    name: 'pickle of a class defined in the cell',
    source: 'import pickle\nclass A:\n    x = 1\nprint(type(pickle.loads(pickle.dumps(A()))).__name__)\n',
    observation: 'A\n',
  },
  { name: 'inspect.getsource of a cell function', source: 'import inspect\ndef g():\n    return 1\nprint(inspect.getsource(g), end="")\n', observation: 'def g():\n    return 1\n' },
  { name: 'unicode line separators inside strings', source: 'x = "a\u2028b\x85c"\nprint(len(x))\n', observation: '5\n' },
  { name: 'tabs for indentation', source: 'for i in range(2):\n\tprint(i)\nprint("t")\n', observation: '0\n1\nt\n' },
  { name: 'async def with asyncio.run', source: 'import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    return 7\nprint(asyncio.run(f()))\n', observation: '7\n' },
  {
    name: 'IndentationError late in the file',
    source: "print('a')\nif True:\n    x = 1\n  y = 2\n",
    ok: false,
  },
  { name: 'input() sees an empty stdin, not the source', source: 'try:\n    input()\nexcept EOFError:\n    print("eof")\nprint("x")\n', observation: 'eof\nx\n' },
];

describe('incremental execution equals whole-file execution', () => {
  it.each(EXECUTION_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [incremental, whole] = await Promise.all([
      runScript(sandbox, c.source, { mode: 'incremental' }),
      runScript(sandbox, c.source, { mode: 'whole' }),
    ]);
    expect(incremental.result.observation).toBe(whole.result.observation);
    expect(incremental.result.ok).toBe(whole.result.ok);
    if (c.observation !== undefined) expect(withoutCarets(incremental.result.observation)).toBe(withoutCarets(c.observation));
    if (c.ok !== undefined) expect(incremental.result.ok).toBe(c.ok);
  });
});
