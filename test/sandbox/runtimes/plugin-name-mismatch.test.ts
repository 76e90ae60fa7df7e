import { afterAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

// A module whose default export is another plugin than the tool was made for (a moduleUrl pointing
// at the wrong file) was refused with a plain Error in the worker and the plugin process: the
// call's error said so but carried no `data.code`, unlike every other failure of a runtime. It is
// a PluginNameMismatchError now (`sandbox_error`), the code each runtime's result carries.

const pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { sparesPerPlugin: 0, uidBase: 1_900_977_000 } });

afterAll(async () => {
  await pools.close();
});

describe('a module that exports another plugin than the tool names', () => {
  for (const runtime of ['thread', 'process'] as const) {
    it(`fails the call with code sandbox_error (runtime ${runtime})`, async () => {
      const tool = toolFromPlugin({ ...echo, name: 'not_echo', runtime }, { moduleUrl: fixture('echo-plugin.ts'), pools });
      const run = await runScriptedCall(tool, { args: { text: 'x' } });
      expect(run.result).toEqual({
        ok: false,
        content: 'error: not_echo failed: module exports plugin "echo_sample", expected "not_echo"',
        data: { code: 'sandbox_error', runtime },
      });
    });
  }
});
