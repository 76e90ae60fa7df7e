import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { runScript } from './python-test-helpers.ts';

/**
 * The sandbox parses each statement under warning filters of its own (python/warning_capture.py),
 * and the filters are the process's: a thread of the cell's that warned while a statement was
 * parsed had its warning collected with the parser's and never shown. The interpreter switches
 * threads as a long parse returns, inside that window, so a busy thread lost thousands (here,
 * 6,000 to 11,000 of some 350,000). A script shows every one.
 */
let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
});

afterAll(async () => {
  await sandbox?.close();
});

/** A function long enough that its parse outlasts the interpreter's switch interval (5 ms). */
function longFunction(name: string, warns: boolean): string {
  const body = Array.from({ length: 3000 }, (_, i) => `    v${i} = [${i}, ${i} + 1, "s${i}"]\n`).join('');
  // A string the compiler warns about: its own warning is collected while the thread waits.
  return `def ${name}():\n${warns ? '    pattern = "\\d"\n' : ''}${body}    return 0\n`;
}

const SOURCE = [
  'import threading, warnings\n',
  "warnings.simplefilter('always')\n",
  'shown = []\n',
  'warnings.showwarning = lambda message, category, *rest, **kw: category is UserWarning and shown.append(1)\n',
  'stop = threading.Event()\n',
  'sent = []\n',
  'def loop():\n    while not stop.is_set():\n        warnings.warn(f"w{len(sent)}")\n        sent.append(1)\n',
  'thread = threading.Thread(target=loop)\n',
  'thread.start()\n',
  longFunction('first', false),
  longFunction('second', true),
  longFunction('third', false),
  'stop.set(); thread.join()\n',
  "print('lost', len(sent) - len(shown), 'of', len(sent) > 0)\n",
].join('');

describe("a thread's warnings while the sandbox parses a statement", () => {
  it('are all shown (the parse collected and dropped them)', async () => {
    for (const mode of ['incremental', 'whole'] as const) {
      const { result } = await runScript(sandbox, SOURCE, { mode });
      expect(result.observation, mode).toMatch(/lost 0 of True\n$/);
      expect(result.exitCode, mode).toBe(0);
    }
  });
});
