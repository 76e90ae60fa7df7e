import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript } from './python-test-helpers.ts';

/**
 * The names a script's `__main__` starts with. The interpreter gives every main module an empty
 * `__annotations__` and a script's a `__cached__` of None; a cell's module had neither, so code
 * reading them at the top level got a NameError where the script printed `{}` or `None`. Nor
 * could its code name `__file__` (only `__main__.__file__` worked), so the common
 * `Path(__file__).parent` or `os.path.dirname(__file__)` failed with a NameError.
 */
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-main-module-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, string> = {
  'an empty __annotations__ before any annotation': "print(__annotations__)\nx: int = 1\nprint(__annotations__)\n",
  'annotations added by hand': "__annotations__['y'] = str\nprint(__annotations__)\n",
  '__cached__ is None': 'print(__cached__)\n',
};

describe("a cell's __main__ starts with a script's names", () => {
  it.each(Object.entries(SCRIPTS))('%s', async (_name, source) => {
    const real = await runAsScript(sandbox.python, scratch, 'main_module.py', source, '<llm-cell>');
    const [incremental, whole] = await Promise.all([
      runScript(sandbox, source, { mode: 'incremental' }),
      runScript(sandbox, source, { mode: 'whole' }),
    ]);
    expect(real).not.toContain('Error');
    expect(incremental.result.observation).toBe(real);
    expect(whole.result.observation).toBe(real);
  });
});

describe('__file__ in the cell\'s own code', () => {
  it('names the cell\'s file in its working directory, as a script\'s names the script', async () => {
    const source =
      "import os\nfrom pathlib import Path\nout = Path(__file__).parent / 'out.txt'\nout.write_text('hi')\n" +
      "def where():\n    return os.path.dirname(os.path.abspath(__file__)) == os.getcwd()\n" +
      "print(out.read_text(), where(), '__file__' in globals(), os.path.basename(__file__))\n";
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, mode).toBe('hi True True <llm-cell>\n');
    }
  });

  it('holds the code up to the running statement when the code reads it (later lines may not have arrived)', async () => {
    const source = "x = 1\nprint(open(__file__).read().splitlines())\ny = 2\n";
    const { result } = await runScript(sandbox, source);
    expect(result.observation).toBe("['x = 1', 'print(open(__file__).read().splitlines())']\n");
  });

  it('code that assigns __file__ gets its own value', async () => {
    const { result } = await runScript(sandbox, "import sys\n__file__ = 'mine.py'\nprint(__file__, sys.modules['__main__'].__file__)\n");
    expect(result.observation).toBe('mine.py mine.py\n');
  });
});
