import { afterAll, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import onloadThrows from './fixtures/onload-throws-plugin.ts';

// A plugin whose onLoad threw has no hooks where its calls run: a worker or plugin process cannot
// run its onAbort, so inline ran it alone (reason `onLoad failed: …`), and a test written inline
// expected an onAbort the sandbox never runs. onStart did not run either: nothing to release.
const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_960_000 } });
afterAll(() => pools.close());

const moduleUrl = new URL('./fixtures/onload-throws-plugin.ts', import.meta.url);

it('runs no onAbort after a throwing onLoad, in every runtime', async () => {
  for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
    const tool = toolFromPlugin({ ...onloadThrows, runtime }, { moduleUrl, pools });
    const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['text'], value: 'hi' }], args: { text: 'hi' } });
    expect(run.result?.content, runtime).toBe('error: onload_throws onLoad failed: no library');
    // An onAbort in thread runs after the result (a task of its own): give it time to report.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect([...run.progress, ...run.afterEnd], runtime).toEqual([]);
  }
}, 60_000);
