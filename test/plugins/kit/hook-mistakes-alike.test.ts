import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolPlugin } from '../../../plugins/plugin-types.ts';
import type { HookErrorReport } from '../../../sandbox/runtimes/hook-throw.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { faultyPlugin } from '../../sandbox/runtimes/fixtures/faulty-plugin.ts';

// Review 8 (a plugin author's walkthrough): what onEnd returns, what a hook emits and what it
// throws read differently, or not at all, from one runtime to the next. Each must be the same
// tool error wherever the plugin runs, and a throw's stack must reach the gateway log.
const RUNTIMES = ['inline', 'thread', 'process'] as const;
let pools: RuntimePools;
const reports: HookErrorReport[] = [];

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 2 }, process: { uidBase: 1_900_540_000 }, onHookError: (report) => reports.push(report) });
});

afterAll(async () => {
  await pools?.close();
});

function faultyTool(runtime: (typeof RUNTIMES)[number], query = ''): ToolPlugin {
  const moduleUrl = new URL(`../../sandbox/runtimes/fixtures/faulty-plugin.ts${query}`, import.meta.url);
  return toolFromPlugin({ ...faultyPlugin(new URLSearchParams(query)), runtime }, { moduleUrl, pools });
}

/** The call's result with the runtime's own data.code, if any, left out: the words are what must agree. */
async function call(tool: ToolPlugin, mode: string, callId?: string): Promise<{ ok: boolean; content: string }> {
  const run = await runScriptedCall(tool, { args: { mode }, ...(callId ? { callId } : {}) });
  return { ok: run.result?.ok ?? true, content: run.result?.content ?? '(no result)' };
}

const JSON_HINT = '(data reaches the client as JSON: objects, arrays, strings, numbers, booleans and null)';
const SHAPES = "ctx.emit takes { type: 'unit-done', detail } or { type: 'output', stream: 'stdout' | 'stderr', text } (strings)";

describe('review 8: hook mistakes read the same in every runtime', () => {
  // Finding 2: inline and thread passed it on (a streamed request then failed whole), the process
  // runtime's plugin process crashed ("exited with code 1"), a thread said "returned no result".
  it('onEnd data that is not JSON is the call\'s tool error, naming what and where', async () => {
    const expected = {
      'data-bigint': `error: faulty's onEnd returned data that is not JSON: a BigInt at data.n ${JSON_HINT}`,
      'data-cycle': `error: faulty's onEnd returned data that is not JSON: a cycle at data.list[1] (it contains itself) ${JSON_HINT}`,
      'data-function': `error: faulty's onEnd returned data that is not JSON: a function at data.nested.f ${JSON_HINT}`,
    };
    for (const runtime of RUNTIMES) {
      const tool = faultyTool(runtime);
      for (const [mode, content] of Object.entries(expected)) expect(await call(tool, mode), `${runtime} ${mode}`).toEqual({ ok: false, content });
    }
  });

  it('process: a result that cannot be sent as JSON after all is the call\'s error, not a crash of the plugin process', async () => {
    const result = await call(faultyTool('process'), 'data-getter');
    expect(result.ok).toBe(false);
    expect(result.content).toMatch(/^error: faulty's onEnd returned data that is not JSON \(.*BigInt.*\)$/);
  });

  // Findings 3 and 6: inline passed any event on (malformed client events), the process runtime
  // killed the call with the raw wire line, and a thread dropped it, or said "returned no result".
  it('a malformed ctx.emit event fails the call, naming the missing field', async () => {
    const expected = {
      'emit-no-stream': `error: faulty's ctx.emit({ type: 'output', text }) needs stream 'stdout' or 'stderr' (got undefined); ${SHAPES}`,
      'emit-no-detail': `error: faulty's ctx.emit({ type: 'unit-done' }) needs detail, a string (got undefined); ${SHAPES}`,
      'emit-unknown-type': `error: faulty's ctx.emit({ type: 'progress', detail }) needs type 'unit-done' or 'output' (got "progress"); ${SHAPES}`,
      'emit-bigint-detail': `error: faulty's ctx.emit({ type: 'unit-done', detail }) needs detail, a string (got bigint); ${SHAPES}`,
    };
    for (const runtime of RUNTIMES) {
      const tool = faultyTool(runtime);
      for (const [mode, content] of Object.entries(expected)) expect(await call(tool, mode), `${runtime} ${mode}`).toEqual({ ok: false, content });
    }
  });

  // Review 8 (the diff's review, #2): in process and inline the bad event aborted the call while
  // onEnd went on (onAbort beside a commit in progress, the process killed); thread let it finish.
  it('a malformed ctx.emit in onEnd lets onEnd finish, then is the call\'s error, in every runtime', async () => {
    for (const runtime of RUNTIMES) {
      const run = await runScriptedCall(faultyTool(runtime), { args: { mode: 'emit-bad-then-commit' } });
      expect(run.result, runtime).toEqual({ ok: false, content: `error: faulty's ctx.emit({ type: 'unit-done' }) needs detail, a string (got undefined); ${SHAPES}` });
      expect(run.progress, runtime).toEqual([{ type: 'unit-done', detail: 'committed' }]);
    }
  });

  // Finding 5: `failed: <message>`, as an onEnd throw reads.
  it('a throwing onLoad says onLoad failed', async () => {
    for (const runtime of RUNTIMES) {
      expect(await call(faultyTool(runtime, '?load=throw'), 'x'), runtime).toEqual({ ok: false, content: 'error: faulty onLoad failed: boom in onLoad' });
    }
  });

  // Finding 4: nothing of a throw reached the log, and a thrown object read `[object Object]`.
  it('a thrown non-Error is described as JSON', async () => {
    for (const runtime of RUNTIMES) {
      expect(await call(faultyTool(runtime), 'end-throw-object'), runtime).toEqual({ ok: false, content: 'error: faulty failed: {"code":42}' });
    }
  });

  it('a hook\'s throw goes to onHookError with the tool, the hook, the call and the stack', async () => {
    for (const runtime of RUNTIMES) {
      reports.length = 0;
      expect(await call(faultyTool(runtime), 'end-throw', `call_end_${runtime}`), runtime).toEqual({ ok: false, content: 'error: faulty failed: deliberate failure' });
      await runScriptedCall(faultyTool(runtime), { pieces: [{ kind: 'field', path: ['mode'], value: 'throw' }], args: { mode: 'throw' }, callId: `call_piece_${runtime}` });
      await call(faultyTool(runtime, '?load=throw'), 'x', `call_load_${runtime}`);
      expect(reports, runtime).toEqual([
        { plugin: 'faulty', hook: 'onEnd', runtime, callId: `call_end_${runtime}`, stack: expect.stringMatching(/^Error: deliberate failure\n\s+at .*faulty-plugin\.ts(\?[^:]*)?:\d+/) },
        { plugin: 'faulty', hook: 'onPiece', runtime, callId: `call_piece_${runtime}`, stack: expect.stringMatching(/^Error: boom in onPiece\n\s+at .*faulty-plugin\.ts(\?[^:]*)?:\d+/) },
        { plugin: 'faulty', hook: 'onLoad', runtime, callId: `call_load_${runtime}`, stack: expect.stringMatching(/^Error: boom in onLoad\n\s+at .*faulty-plugin\.ts(\?[^:]*)?:\d+/) },
      ]);
    }
  });
});
