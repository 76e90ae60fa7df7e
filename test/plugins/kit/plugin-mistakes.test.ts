import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall, type ScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolPlugin } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { faultyPlugin } from '../../sandbox/runtimes/fixtures/faulty-plugin.ts';

// The mistakes a tool author's QA walkthrough found reading differently (or not at all) from one
// runtime to the next: each must be the same tool error wherever the plugin runs.
const RUNTIMES = ['inline', 'thread', 'process'] as const;
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 2 }, process: { uidBase: 1_900_500_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** The faulty fixture in `runtime`; the query (of its module URL, for the runtimes that import it) sets which hook throws. */
async function faultyTool(runtime: (typeof RUNTIMES)[number], query = ''): Promise<ToolPlugin> {
  const moduleUrl = new URL(`../../sandbox/runtimes/fixtures/faulty-plugin.ts${query}`, import.meta.url);
  return toolFromPlugin({ ...faultyPlugin(new URLSearchParams(query)), runtime }, { moduleUrl, pools });
}

const piece = (mode: string): ScriptedCall => ({ pieces: [{ kind: 'field', path: ['mode'], value: mode }], args: { mode } });

describe('a plugin mistake reads the same in every runtime', () => {
  it('an onPiece that returns neither nothing nor reject(reason) fails the call instead of carrying on', async () => {
    const expected: Record<string, string> = {
      'return-string': `error: faulty's onPiece returned "reject", not undefined or reject(reason)`,
      'return-shape': `error: faulty's onPiece returned an object { reject }, not undefined or reject(reason)`,
      'return-true': `error: faulty's onPiece returned true, not undefined or reject(reason)`,
    };
    for (const runtime of RUNTIMES) {
      const tool = await faultyTool(runtime);
      for (const [mode, content] of Object.entries(expected)) {
        const run = await runScriptedCall(tool, piece(mode));
        expect(run.rejected, `${runtime} ${mode}`).toBeUndefined();
        expect(run.result, `${runtime} ${mode}`).toEqual({ ok: false, content });
      }
    }
  });

  it('a throwing onLoad, onStart or onPiece is the call\'s tool error, worded alike (a plain Error by its message)', async () => {
    for (const runtime of RUNTIMES) {
      const results = [
        (await runScriptedCall(await faultyTool(runtime, '?load=throw'), piece('x'))).result,
        (await runScriptedCall(await faultyTool(runtime, '?start=throw'), piece('x'))).result,
        (await runScriptedCall(await faultyTool(runtime), piece('throw'))).result,
        (await runScriptedCall(await faultyTool(runtime), piece('throw-type-error'))).result,
      ];
      expect(results, runtime).toEqual([
        { ok: false, content: 'error: faulty onLoad failed: boom in onLoad' },
        { ok: false, content: 'error: faulty failed: boom in onStart' },
        { ok: false, content: 'error: faulty failed: boom in onPiece' },
        { ok: false, content: 'error: faulty failed: TypeError: not a function' },
      ]);
    }
  });

  // Regression (review 3, finding 6): thread and process said `found no worker/process to run it
  // within 30000 ms`, after 30 s, where inline said `onLoad did not finish within 30000 ms`.
  it('an onLoad that never settles fails the call with the same onLoad words, at the pools\' onLoad limit', async () => {
    const quick = createRuntimePools({ onLoadTimeoutMs: 500, thread: { maxThreads: 1 }, process: { sparesPerPlugin: 0, uidBase: 1_900_520_000 } });
    try {
      for (const runtime of RUNTIMES) {
        const moduleUrl = new URL('../../sandbox/runtimes/fixtures/faulty-plugin.ts?load=hang', import.meta.url);
        const tool = toolFromPlugin({ ...faultyPlugin(new URLSearchParams('?load=hang')), runtime }, { moduleUrl, pools: quick });
        const startedAt = performance.now();
        const run = await runScriptedCall(tool, piece('x'));
        expect(run.result, runtime).toEqual({
          ok: false,
          content: 'error: faulty onLoad did not finish within 500 ms',
          data: { code: 'sandbox_limit_exceeded', runtime },
        });
        // Not the 30 s start-up limits: the onLoad limit ends it (a worker's or process's start included).
        expect(performance.now() - startedAt, runtime).toBeLessThan(10_000);
      }
    } finally {
      await quick.close();
    }
  });

  it('invalid arguments get the same message and data.code', async () => {
    for (const runtime of RUNTIMES) {
      const run = await runScriptedCall(await faultyTool(runtime), { args: { mode: 42 } });
      expect(run.result, runtime).toEqual({
        ok: false,
        content: 'error: faulty got invalid arguments: ✖ Invalid input: expected string, received number\n  → at mode',
        data: { code: 'invalid_arguments', runtime },
      });
    }
  });

  it('thread: a function kept in ctx.state is said to be a value that cannot be copied between threads', async () => {
    const tool = await faultyTool('thread');
    const run = await runScriptedCall(tool, piece('state-function'));
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/^error: faulty kept a value in ctx.state\["callback"\] that cannot be copied between threads \(.*could not be cloned.*\)/);
    // The worker lived through it: the next call is served.
    expect((await runScriptedCall(tool, piece('fine'))).result).toEqual({ ok: true, content: 'fine: fine' });
  });
});

describe('runScriptedCall', () => {
  it('gives a hand-written tool whose piece() throws the tool error the gateway gives it', async () => {
    const aborted: string[] = [];
    const tool: ToolPlugin = {
      name: 'handmade',
      description: 'throws in piece',
      parameters: { type: 'object', properties: {} },
      consumes: 'field',
      start: () => ({
        piece: () => {
          throw new Error('bad piece');
        },
        end: async () => ({ ok: true, content: 'never' }),
        abort: (reason) => void aborted.push(reason),
      }),
    };
    const run = await runScriptedCall(tool, piece('x'));
    expect(run.result).toEqual({ ok: false, content: 'error: handmade failed: bad piece' });
    expect(aborted).toEqual(['failed: bad piece']);
  });
});
