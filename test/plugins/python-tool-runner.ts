import { afterAll, beforeAll } from 'vitest';
import type { ToolResult } from '../../plugins/plugin-types.ts';
import { createPythonPlugin } from '../../plugins/python/python-plugin.ts';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';

/**
 * The python tool over one sandbox (no pre-imports) for the suite that calls this at its top
 * level: started before its tests, closed after. Returns a run of one whole cell.
 */
export function pythonToolRunner(): (code: string) => Promise<ToolResult> {
  let sandbox: PythonSandbox;
  beforeAll(async () => {
    sandbox = await startPythonSandbox({ preImports: [] });
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  return (code) => {
    const ctx = { callId: 'call_1', signal: new AbortController().signal, emit: () => {} };
    return createPythonPlugin(sandbox).start(ctx).end({ code });
  };
}
