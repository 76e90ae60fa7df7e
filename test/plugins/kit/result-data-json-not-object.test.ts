import { afterAll, expect, it } from 'vitest';
import { createRuntimePools, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';
import dataNotObject from './fixtures/data-not-object-plugin.ts';

// onEnd's `data` must be an object, and reaches the client as its JSON. A Date (or anything whose
// toJSON gives no object) passed the object check as written, then became a string (or null, or an
// array): inline and thread answered ok with `data: "1970-…"`, while process and isolate sent it
// on the wire and died of a protocol error (`data: expected object, received string`).
const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_980_000 } });
afterAll(() => pools.close());

const moduleUrl = new URL('./fixtures/data-not-object-plugin.ts', import.meta.url);

it("a data whose JSON is not an object is the plugin's error, said alike in every runtime", async () => {
  for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
    const tool = toolFromPlugin({ ...dataNotObject, runtime }, { moduleUrl, pools });
    for (const [kind, json] of [['date', 'a string'], ['null', 'null'], ['array', 'an array']] as const) {
      const run = await runScriptedCall(tool, { args: { kind } });
      expect(run.result?.ok, `${runtime} ${kind}`).toBe(false);
      expect(run.result?.content, `${runtime} ${kind}`).toMatch(new RegExp(`^error: data_not_object's onEnd returned \\{ ok, content, data \\} with data whose JSON is ${json} \\(.*toJSON.*\\); data must be an object`));
    }
  }
}, 90_000);
