import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript } from './python-test-helpers.ts';

/**
 * The ". Did you mean: 'values'?" a script's traceback adds to a NameError or AttributeError after
 * a typo. On 3.11 (Debian's python3) the interpreter's C printer adds it and the traceback module,
 * which the cell printed with, does not: the cell showed `NameError: name 'valuse' is not defined`
 * alone (python/name_suggestion.py).
 */
const HERE = fileURLToPath(new URL('.', import.meta.url));
let sandbox: PythonSandbox;
let scratch: string;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
  scratch = mkdtempSync(join(tmpdir(), 'conveyor-suggest-'));
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const SCRIPTS: Record<string, string> = {
  'a global': 'values = [1, 2]\nprint(valuse)\n',
  'a local, then a builtin': 'def f(count):\n    try:\n        return cuont\n    except NameError as e:\n        print(e)\n    pritn(count)\nf(1)\n',
  'an attribute, in a thread': 'import math, threading\nt = threading.Thread(target=lambda: math.sqr(2)); t.start(); t.join()\nclass P:\n    def __init__(self):\n        self.alpha = 1\nP().alpah\n',
  'a subclass, and nothing close': 'class N(NameError):\n    pass\ntry:\n    zzzzzz\nexcept NameError as e:\n    print(e)\nraise N("n", name="valuse")\n',
};

describe('a NameError or AttributeError after a typo', () => {
  it.each(Object.entries(SCRIPTS))('shows what a script shows: %s', async (name, source) => {
    const real = await runAsScript(sandbox.python, scratch, 'suggest.py', source, '<llm-cell>');
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, source, { mode });
      expect(result.observation, `${name} ${mode}`).toBe(real);
    }
  });

  it("offers the name the interpreter offers (distance, limits; 400 generated typos, near misses of one another)", async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(sandbox.python, [join(HERE, 'name-suggestion-harness.py'), join(HERE, '..', '..', 'sandbox', 'python'), '7', '400'], (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      );
    });
    expect(out).toMatch(/^checked \d{3}\n$/);
  });
});
