import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runAsScript, runScript } from './python-test-helpers.ts';

/**
 * The names a script's `__main__` starts with. The interpreter gives every main module an empty
 * `__annotations__` and a script's a `__cached__` of None; a cell's module had neither, so code
 * reading them at the top level got a NameError where the script printed `{}` or `None`.
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
