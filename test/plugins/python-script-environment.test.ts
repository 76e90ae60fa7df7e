import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../plugins/plugin-types.ts';
import { createPythonPlugin } from '../../plugins/python/python-plugin.ts';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';

// What model-written code asks of the process it runs in, beyond its own statements; what the
// tool decided for each is in plugins/python/README.md.
let sandbox: PythonSandbox;

beforeAll(async () => {
  sandbox = await startPythonSandbox({ preImports: [] });
});

afterAll(async () => {
  await sandbox?.close();
});

function run(code: string): Promise<ToolResult> {
  const ctx = { callId: 'call_1', signal: new AbortController().signal, emit: () => {} };
  return createPythonPlugin(sandbox).start(ctx).end({ code });
}

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
});
