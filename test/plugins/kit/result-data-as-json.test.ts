import { afterAll, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import jsonData from './fixtures/json-data-plugin.ts';

// The README: data reaches the client as JSON, "a Date … is what its toJSON gives; undefined
// fields are left out", in every runtime. process and isolate send it as JSON; inline and thread
// handed on the plugin's own object (a Date, NaN, an undefined field, and keys beside ok, content
// and data), so a test written inline failed in the sandbox.
const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_970_000 } });
afterAll(() => pools.close());

const moduleUrl = new URL('./fixtures/json-data-plugin.ts', import.meta.url);

it('gives onEnd data as its JSON, and only ok, content and data, in every runtime', async () => {
  for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
    const run = await runScriptedCall(toolFromPlugin({ ...jsonData, runtime }, { moduleUrl, pools }), { args: { text: 'hi' } });
    const data = { ...run.result?.data };
    for (const key of ['runtime', 'requestedRuntime', 'fallbackReason']) delete data[key];
    expect({ ...run.result, data }, runtime).toStrictEqual({ ok: true, content: 'hi', data: { when: '1970-01-01T00:00:00.000Z', ratio: null, rows: [1] } });
  }
}, 60_000);
