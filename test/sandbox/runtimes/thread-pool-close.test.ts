import { describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// ThreadPool.close() with calls in flight: piscina rejects the task running on the worker it
// terminates, and every queued one, in its own words, and each call read
// `error: <tool> failed: Terminating worker thread`, as if its plugin had failed. They now read as
// the process runtime words a call its close turned away: the runtime is shut down.

const shutDown = { ok: false, content: 'error: echo_sample failed: the thread runtime is shut down', data: { code: 'sandbox_error', runtime: 'thread' } };

describe('ThreadPool.close() with calls in flight', () => {
  it('settles the call whose hook runs and the queued ones, each saying the runtime is shut down', async () => {
    const own = createRuntimePools({ thread: { maxThreads: 1 } });
    const tool = toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools: own });
    // The one worker is up with the plugin loaded once the piece has its verdict; then its onEnd
    // (a minute long) goes to the worker before the other calls' onStart, which queue behind it.
    const running = tool.start({ callId: 'call_running', signal: new AbortController().signal, emit: () => undefined });
    expect(await running.piece({ kind: 'field', path: ['text'], value: 'a' })).toBeUndefined();
    const ended = running.end({ text: 'a', delayMs: 60_000 });
    const queued = ['b', 'c'].map((text) => runScriptedCall(tool, { args: { text } }));
    expect(await eventually(() => own.thread.stats.queued === 2, 1000)).toBe(true);
    await own.close();
    expect(await ended).toEqual(shutDown);
    for (const run of await Promise.all(queued)) expect(run.result).toEqual(shutDown);
  });
});
