import { BroadcastChannel } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import faulty from './fixtures/faulty-plugin.ts';
import printing from './fixtures/printing-plugin.ts';
import hostile from './fixtures/hostile-plugin.ts';
import importMarker, { IMPORTS_CHANNEL } from './fixtures/import-marker-plugin.ts';
import slowLoad from './fixtures/slow-load-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 2, maxQueue: 8, maxOldGenerationSizeMb: 64 } });
});

afterAll(async () => {
  await pools?.close();
});

const echoTool = () => toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools });
const hostileTool = (timeoutMs = 1500) =>
  toolFromPlugin({ ...hostile, runtime: 'thread', limits: { timeoutMs } }, { moduleUrl: fixture('hostile-plugin.ts'), pools });

describe('thread runtime', () => {
  it('runs the hooks in workers, carrying ctx.state from hook to hook', async () => {
    const run = await runScriptedCall(echoTool(), {
      pieces: [
        { kind: 'field', path: ['text'], value: 'one' },
        { kind: 'field', path: ['extra'], value: 2 },
      ],
      args: { text: 'one' },
      callId: 'call_thread',
    });
    expect(run).toEqual({
      verdicts: [undefined, undefined],
      progress: [
        { type: 'unit-done', detail: 'field text' },
        { type: 'unit-done', detail: 'field extra' },
      ],
      result: { ok: true, content: 'ONE', data: { pieces: 2, startedBy: 'call_thread' } },
      afterEnd: [],
    });
  });

  it('returns a reject verdict from a worker', async () => {
    const run = await runScriptedCall(echoTool(), { pieces: [{ kind: 'field', path: ['text'], value: 'bad' }], args: { text: 'bad' } });
    expect(run.rejected).toBe('the value "bad" is not allowed');
  });

  it('turns a hang, a heap blow-up and a worker exit into tool errors while another call completes', async () => {
    const bystander = runScriptedCall(echoTool(), { args: { text: 'calm', delayMs: 1000 } });
    const [loop, memory, crash] = await Promise.all([
      runScriptedCall(hostileTool(), { args: { attack: 'infinite-loop' } }),
      runScriptedCall(hostileTool(20_000), { args: { attack: 'memory-bomb' } }),
      runScriptedCall(hostileTool(), { args: { attack: 'crash' } }),
    ]);
    // Any wait for a worker (the memory bomb holds one) is said in brackets after the limit.
    expect(loop.result).toMatchObject({ ok: false, content: expect.stringMatching(/^error: hostile timed out after 1500 ms( \(.+\))?$/), data: { code: 'sandbox_limit_exceeded' } });
    expect(memory.result).toMatchObject({ ok: false, content: 'error: hostile ran out of memory (worker heap limit)' });
    expect(crash.result?.ok).toBe(false);
    expect((await bystander).result).toMatchObject({ ok: true, content: 'CALM' });
    // The pool replaced the workers it lost and keeps serving.
    const after = await runScriptedCall(echoTool(), { args: { text: 'after' } });
    expect(after.result).toMatchObject({ ok: true, content: 'AFTER' });
  });

  it('does not count the model\'s pace against the time limit: only hook work, then everything after the end', async () => {
    const tool = toolFromPlugin({ ...echo, runtime: 'thread', limits: { timeoutMs: 1500 } }, { moduleUrl: fixture('echo-plugin.ts'), pools });
    const pieces = ['a', 'b', 'c'].map((value) => ({ kind: 'field' as const, path: ['text'], value }));
    // 2.8 s of decode, past the 1.5 s limit: a sequential decode would have called it at the end.
    const slow = await runScriptedCall(tool, { pieces, args: { text: 'slow model' }, gapMs: 700 });
    expect(slow.result).toMatchObject({ ok: true, content: 'SLOW MODEL' });
    // After the end every millisecond counts.
    const late = await runScriptedCall(tool, { pieces, args: { text: 'late', delayMs: 2000 } });
    expect(late.result).toMatchObject({ ok: false, content: expect.stringMatching(/^error: echo_sample timed out after 1500 ms( \(.+\))?$/), data: { code: 'sandbox_limit_exceeded' } });
  });

  it("does not count the wait for a worker to load the plugin against the call's limit", async () => {
    // A pool of its own, not warmed: the first call's worker starts and loads the plugin (1.5 s) while the call waits.
    const own = createRuntimePools({ thread: { maxThreads: 1 } });
    try {
      const tool = toolFromPlugin(slowLoad, { moduleUrl: fixture('slow-load-plugin.ts'), pools: own });
      const run = await runScriptedCall(tool, { args: { text: 'cold' } });
      expect(run.result).toMatchObject({ ok: true, content: 'COLD' });
    } finally {
      await own.close();
    }
  });

  // A call timed out on a busy pool read `timed out after 500 ms`, though no hook of it had run
  // for any of them: from the call's end on, the wait for a worker counts (CallClock).
  it('says, when it times out, how much of the limit it waited for a free worker, and the earlier wait not counted', async () => {
    const own = createRuntimePools({ thread: { maxThreads: 1 } });
    try {
      const holder = toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools: own });
      const waiter = toolFromPlugin({ ...echo, runtime: 'thread', limits: { timeoutMs: 500 } }, { moduleUrl: fixture('echo-plugin.ts'), pools: own });
      // The one worker's queue, in order: held's onStart (behind the worker's start), waited's
      // onStart, held's onEnd (3 s), then waited's onEnd, which its 500 ms run out waiting for.
      const held = runScriptedCall(holder, { args: { text: 'held', delayMs: 3000 } });
      const waited = await runScriptedCall(waiter, { args: { text: 'waited' } });
      expect(waited.result).toMatchObject({ ok: false, data: { code: 'sandbox_limit_exceeded' } });
      const said = /^error: echo_sample timed out after 500 ms \(it ran (\d+) ms and waited (\d+) ms for a free worker(, not counting \d+ ms it waited for one earlier)?\)$/.exec(waited.result?.content ?? '');
      expect(said, waited.result?.content).not.toBeNull();
      const [ran, wait] = [Number(said![1]), Number(said![2])];
      expect(ran + wait).toBe(500);
      expect(wait).toBeGreaterThan(ran);
      expect((await held).result).toMatchObject({ ok: true, content: 'HELD' });
    } finally {
      await own.close();
    }
  });

  it("serves a plugin's calls while another plugin of the pool is still in its onLoad (which never ends)", async () => {
    const own = createRuntimePools({ thread: { maxThreads: 1 } });
    try {
      const hanging = toolFromPlugin({ ...faulty, name: 'hangs_at_load', runtime: 'thread' }, { moduleUrl: `${fixture('faulty-plugin.ts')}?load=hang&name=hangs_at_load`, pools: own });
      const tool = toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools: own });
      hanging.warm();
      tool.warm();
      // Before, the worker took no call until every preloaded onLoad had ended or hit its limit (60 s in all).
      const run = await runScriptedCall(tool, { args: { text: 'served' } });
      expect(run.result).toMatchObject({ ok: true });
    } finally {
      await own.close();
    }
  });

  it("hands what a plugin prints in a worker to onOutput, naming the plugin, instead of the gateway's stdout", async () => {
    const printed: Array<{ plugin: string; text: string }> = [];
    const own = createRuntimePools({ thread: { maxThreads: 1, onOutput: (output) => printed.push(output) } });
    try {
      const tool = toolFromPlugin(printing, { moduleUrl: fixture('printing-plugin.ts'), pools: own });
      const run = await runScriptedCall(tool, { args: { text: 'hello' } });
      expect(run.result).toMatchObject({ ok: true, content: 'ok' });
      await until(() => printed.length >= 2);
      expect(printed).toEqual([
        { plugin: 'printing', text: 'printed hello\n' },
        { plugin: 'printing', text: 'no newline' },
      ]);
    } finally {
      await own.close();
    }
  });

  it('stops a call when the request is aborted', async () => {
    const controller = new AbortController();
    const pending = runScriptedCall(hostileTool(20_000), { args: { attack: 'infinite-loop' } }, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const run = await pending;
    expect(run.result).toMatchObject({ ok: false, content: 'error: hostile was aborted: request aborted' });
  });

  it('refuses a call at once when the queue is full', async () => {
    const small = createRuntimePools({ thread: { maxThreads: 1, maxQueue: 1 } });
    try {
      const tool = toolFromPlugin({ ...hostile, runtime: 'thread', limits: { timeoutMs: 300 } }, { moduleUrl: fixture('hostile-plugin.ts'), pools: small });
      const calls = [0, 1, 2].map((i) => runScriptedCall(tool, { args: { attack: 'sleep' }, callId: `c${i}` }));
      const results = await Promise.all(calls);
      const refused = results.filter((r) => r.result?.data?.['code'] === 'sandbox_queue_full');
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]?.result?.content).toBe('error: hostile failed: the thread runtime is busy: 1 running and 1 queued');
    } finally {
      await small.close();
    }
  });

  it('warms every worker before the first call (import and onLoad), and a worker that replaces an aborted one too', async () => {
    const own = createRuntimePools({ thread: { maxThreads: 2 } });
    // Thread ids of the workers that imported the plugin (this test's own import is thread 0) and ran its onLoad.
    const imports: number[] = [];
    const onLoads: string[] = [];
    const onEnds: string[] = [];
    const channel = new BroadcastChannel(IMPORTS_CHANNEL);
    channel.onmessage = (event) => {
      const data = (event as { data: number | string }).data;
      if (typeof data === 'string') (data.startsWith('onEnd') ? onEnds : onLoads).push(data);
      else if (data !== 0) imports.push(data);
    };
    try {
      const tool = toolFromPlugin(importMarker, { moduleUrl: fixture('import-marker-plugin.ts'), pools: own });
      tool.warm();
      await until(() => onLoads.length >= 2);
      expect(onLoads.sort()).toEqual(imports.map((id) => `onLoad ${id}`).sort());
      const ranOn = await Promise.all([0, 1].map(() => runScriptedCall(tool, { args: { delayMs: 300 } })));
      expect(new Set(ranOn.map((r) => Number(r.result?.content)))).toEqual(new Set(imports));
      expect(imports).toHaveLength(2);

      // An aborted call takes its worker down; the one piscina starts in its place imports the plugin at once.
      const controller = new AbortController();
      const aborted = runScriptedCall(tool, { args: { delayMs: 60_000 } }, controller.signal);
      // Aborted once its onEnd runs in a worker: a fixed 200 ms could end it still queued on a
      // slow machine, taking no worker down.
      await until(() => onEnds.length === 3);
      controller.abort();
      expect((await aborted).result?.ok).toBe(false);
      await until(() => onLoads.length >= 3);
      expect(new Set(imports).size).toBe(3);
      expect(onLoads).toContain(`onLoad ${imports[2]}`);
    } finally {
      channel.close();
      await own.close();
    }
  });

  it('loads a module that needs a TypeScript transform (enum, parameter property) in a worker', async () => {
    // Without echo's onPiece, which a `call` plugin is never given (toolFromPlugin refuses it).
    const definition = { ...echo, name: 'transform_sample', consumes: 'call' as const, runtime: 'thread' as const, hooks: { onEnd: echo.hooks.onEnd } };
    const run = await runScriptedCall(toolFromPlugin(definition, { moduleUrl: fixture('transform-plugin.ts'), pools }), { args: { text: 'enum' } });
    expect(run.result).toMatchObject({ ok: true, content: 'ENUM!' });
  });

  it("survives piscina's stray 'error' (a worker's answer to a task already aborted): no uncaught exception", async () => {
    const tool = toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools });
    await runScriptedCall(tool, { args: { text: 'x' } });
    // What piscina emits when such an answer arrives; unheard, the EventEmitter would throw it.
    const piscina = (pools.thread as unknown as { pool: import('node:events').EventEmitter }).pool;
    expect(() => piscina.emit('error', new Error('Unexpected message from Worker: { taskId: 52 }'))).not.toThrow();
    expect((await runScriptedCall(tool, { args: { text: 'still serving' } })).result).toMatchObject({ ok: true });
    // One listener for the pool's life, not one per call (Node warns past ten: MaxListenersExceededWarning).
    expect(piscina.listenerCount('error')).toBe(1);
  });

  it('rejects a module whose default export is another plugin', async () => {
    const tool = toolFromPlugin({ ...echo, name: 'not_echo', runtime: 'thread' }, { moduleUrl: fixture('echo-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { text: 'x' } });
    expect(run.result?.content).toMatch(/module exports plugin "echo_sample", expected "not_echo"/);
  });
});

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
