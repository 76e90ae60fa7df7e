import { afterAll, describe, expect, it } from 'vitest';
import js from '../../../plugins/kit/examples/js-eval-plugin.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

// The js_eval example returned JSON.stringify(value), which is undefined, not a string, for an
// expression whose value is undefined (`void 0`, a call that returns nothing): the model then
// read "js_eval's onEnd returned undefined, not a string or { ok, content }", the plugin's error
// for its own, valid, expression.
const pools = createRuntimePools({ process: { sparesPerPlugin: 0 } });
afterAll(() => pools.close());

describe('the js_eval example', () => {
  it('answers an expression whose value is undefined with "undefined"', async () => {
    const tool = toolFromPlugin(js, { moduleUrl: new URL('../../../plugins/kit/examples/js-eval-plugin.ts', import.meta.url), pools });
    const run = await runScriptedCall(tool, { args: { expression: 'void (await price("milk"))' } });
    expect(run.result).toMatchObject({ ok: true, content: 'undefined' });
  }, 60_000);
});
