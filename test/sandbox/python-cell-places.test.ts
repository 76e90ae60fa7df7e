import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPythonSandbox, type PythonSandbox } from '../../sandbox/python-sandbox.ts';
import { eventually, ProgressRecorder } from './python-test-helpers.ts';

// One cell open at a time, one waiting: the bounds on how many forked cells a flood of calls makes.
let sandbox: PythonSandbox;
beforeAll(async () => {
  sandbox = await startPythonSandbox({ maxCells: 1, maxQueuedCells: 1 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('cells beyond maxCells', () => {
  it('wait for a place, run once they have one, and are not charged the wait on their wall clock', async () => {
    const order: string[] = [];
    const first = new ProgressRecorder();
    const a = sandbox.openCell({ id: 'a', onProgress: first.listener });
    a.pushLine('print("a")\n');
    await first.waitFor((p) => p.type === 'output');

    // b waits behind a, which holds its place while the "model" has not sent its next line.
    // (Output may arrive in more than one piece: the first one is what counts here.)
    const b = sandbox.openCell({ id: 'b', limits: { wallClockMs: 1000 }, onProgress: (p) => p.type === 'output' && !order.includes('b printed') && order.push('b printed') });
    b.pushLine('print("b")\n');
    const bDone = b.finish().then((result) => (order.push('b finished'), result));
    expect(sandbox.cellLoad()).toEqual({ open: 1, queued: 1, maxCells: 1, maxQueuedCells: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(order).toEqual([]);

    order.push('a finishing');
    const aResult = await a.finish();
    expect(aResult).toMatchObject({ ok: true, observation: 'a\n' });
    const bResult = await bDone;
    // Waited 1.5 s with a 1 s wall clock: the wait was not the cell's.
    expect(bResult).toMatchObject({ ok: true, observation: 'b\n' });
    expect(bResult.killedBy).toBeUndefined();
    expect(order).toEqual(['a finishing', 'b printed', 'b finished']);
    expect(await eventually(() => sandbox.cellLoad().open === 0)).toBe(true);
  });

  it('fail at once, with a clear message, when the queue is full too', async () => {
    const a = sandbox.openCell({ id: 'a' });
    const b = sandbox.openCell({ id: 'b' });
    const c = sandbox.openCell({ id: 'c' });
    c.pushLine('print("never")\n');
    const refused = await c.finish();
    expect(refused.ok).toBe(false);
    expect(refused.error?.message).toMatch(/the python runtime is busy: 1 running and 1 queued/);
    // The same type and code as the process and thread runtimes' refusal (the tool result's data.code).
    expect(refused.error).toMatchObject({ type: 'SandboxQueueFullError', code: 'sandbox_queue_full' });
    expect(refused.observation).not.toContain('never');

    a.pushLine('print(1)\n');
    b.pushLine('print(2)\n');
    expect((await a.finish()).observation).toBe('1\n');
    expect((await b.finish()).observation).toBe('2\n');
  });

  it('leave the queue when their call is aborted, making room for the next', async () => {
    const a = sandbox.openCell({ id: 'a' });
    const controller = new AbortController();
    const b = sandbox.openCell({ id: 'b', signal: controller.signal });
    controller.abort();
    expect((await b.settled).killedBy).toBe('abort');
    expect(sandbox.cellLoad().queued).toBe(0);

    const c = sandbox.openCell({ id: 'c' });
    c.pushLine('print("c ran")\n');
    const cDone = c.finish();
    a.pushLine('print("a ran")\n');
    expect((await a.finish()).observation).toBe('a ran\n');
    expect((await cDone).observation).toBe('c ran\n');
    expect(await eventually(() => sandbox.cellLoad().open === 0)).toBe(true);
  });
});
