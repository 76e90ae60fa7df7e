import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolProgress } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

// A call is its pieces, then end() once (ToolExecution). The gateway keeps to that; a test driving
// tool.start() by hand need not, and each runtime did something else with a piece after end():
// inline ran onPiece beside onEnd, thread ran it or dropped it, process sent it to a child that ran
// it after onEnd and answered into the void (the piece() never settled). A second end() ran onEnd
// twice inline and never settled in process. Now both reject at once, in every runtime, with a
// CallOutOfOrderError (code sandbox_error), and the call's own result is untouched.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_630_000 } });
});

afterAll(async () => {
  await pools?.close();
});

describe.each(['inline', 'thread', 'process'] as const)('a piece or a second end after end(), runtime %s', (runtime) => {
  it('is refused, onPiece and onEnd run no more, and the call ends with its result', async () => {
    const tool = toolFromPlugin({ ...echo, runtime }, { moduleUrl: fixture('echo-plugin.ts'), pools });
    const progress: ToolProgress[] = [];
    const execution = tool.start({ callId: 'call_1', signal: new AbortController().signal, emit: (p) => void progress.push(p) });
    const ending = execution.end({ text: 'hi', delayMs: 100 });
    const late = Promise.resolve().then(() => execution.piece({ kind: 'field', path: ['text'], value: 'late' }));
    await expect(late).rejects.toMatchObject({ name: 'CallOutOfOrderError', code: 'sandbox_error', message: 'echo_sample: piece() after end(): a call is its pieces, then end() once' });
    await expect(execution.end({ text: 'again' })).rejects.toMatchObject({ name: 'CallOutOfOrderError', message: 'echo_sample: end() after end(): a call is its pieces, then end() once' });
    expect(await ending).toMatchObject({ ok: true, content: 'HI', data: { pieces: 0 } });
    expect(progress).toEqual([]);
  });
});
