import { describe, expect, it } from 'vitest';
import { SandboxQueueFullError } from '../../core/errors.ts';
import { toToolResult } from '../../plugins/python/cell-observation.ts';
import { failedResult } from '../../sandbox/python-cell-result.ts';

const outcome = { output: '', unitsRun: 0, durationMs: 1, limits: {} as never };

describe('python tool: a cell the sandbox failed', () => {
  it("carries the sandbox's code in data.code, as a process or thread runtime's refusal does", () => {
    const refused = toToolResult(failedResult(SandboxQueueFullError.refusal('python')({ capacity: 1, waiting: 1 }), outcome));
    expect(refused).toMatchObject({
      ok: false,
      content: '[the python runtime is busy: 1 running and 1 queued]',
      data: { code: 'sandbox_queue_full', error: { type: 'SandboxQueueFullError' } },
    });
    expect(toToolResult(failedResult('the Python sandbox process died (SIGKILL)', outcome)).data).toMatchObject({ code: 'sandbox_error', error: { type: 'SandboxError' } });
  });
});
