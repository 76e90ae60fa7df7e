import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript, withoutAddresses } from './python-test-helpers.ts';

/**
 * What a script prints as the interpreter finalizes its main module, after atexit: the `__del__`
 * of objects its globals still hold, a suspended generator's `finally`. A cell ends in os._exit,
 * which finalizes nothing, so it printed none of it ("destructor" demos lost their last lines).
 */
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-finalize-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, [source: string, shows: string]> = {
  'globals in their order, after atexit': [
    "class C:\n    def __init__(self, name): self.name = name\n    def __del__(self): print('bye', self.name)\n" +
      "a = C('a')\n_b = C('_b')\nc = C('c')\n" +
      "def gen():\n    try:\n        yield 1\n    finally:\n        print('gen closed')\ng = gen(); next(g)\n" +
      "import atexit\natexit.register(lambda: print('atexit first'))\nprint('end')\n",
    "end\natexit first\nbye a\nbye _b\nbye c\ngen closed\n",
  ],
  'a __del__ still sees the globals': [
    "import os\nclass C:\n    def __del__(self):\n        print('del sees', os.sep)\nx = C()\nraise SystemExit(3)\n",
    'del sees /\n',
  ],
  'a cycle, after a traceback': [
    "class Node:\n    def __init__(self): self.other = None\n    def __del__(self): print('node freed')\n" +
      'n = Node(); m = Node(); n.other = m; m.other = n\nx = 1 / 0\n',
    'ZeroDivisionError: division by zero\nnode freed\nnode freed\n',
  ],
  'a main module held under another name goes too': [
    "import sys\nsys.modules['keep'] = sys.modules['__main__']\nclass C:\n    def __init__(self, n): self.n = n\n" +
      "    def __del__(self): print('bye', self.n)\na = C('a')\n_b = C('_b')\n",
    'bye a\nbye _b\n',
  ],
  'a main module still held is cleared, _names first': [
    "import sys, __main__\nsys.keep_main = __main__\nclass C:\n    def __init__(self, n): self.n = n\n" +
      "    def __del__(self): print('bye', self.n, sys is None)\na = C('a')\n_b = C('_b')\n",
    'bye _b False\nbye a True\n',
  ],
};

describe('a cell finalizes its main module as a script run does', () => {
  it.each(Object.keys(SCRIPTS))('%s', async (name) => {
    const [source, shows] = SCRIPTS[name]!;
    const filename = '<llm-cell>';
    const [{ result }, real] = await Promise.all([
      runScript(sandbox, source, { filename }),
      runAsScript(sandbox.python, scratch, `${name.replace(/\W+/g, '_')}.py`, source, filename),
    ]);
    expect(result.observation).toContain(shows);
    expect(withoutAddresses(result.observation)).toBe(withoutAddresses(real));
  });

  it('in whole mode too', async () => {
    const { result } = await runScript(sandbox, "class C:\n    def __del__(self): print('bye')\nc = C()\nprint('end')\n", { mode: 'whole' });
    expect(result.observation).toBe('end\nbye\n');
  });
});
