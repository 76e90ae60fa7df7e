import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import lookup from './fixtures/async-refine-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

// A parameters schema with an async refinement failed every call, in every runtime, with zod's
// "Encountered Promise during synchronous parse. Use .parseAsync() instead.": advice to call a
// method the author never calls. The runtimes parse arguments synchronously (plugins/README.md,
// Hooks); the error now says what to change: do the async check in onEnd.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_630_000 } });
});

afterAll(async () => {
  await pools?.close();
});

describe.each(['inline', 'thread', 'process'] as const)('a parameters schema with an async refinement, runtime %s', (runtime) => {
  it('fails the call saying the schema must parse synchronously, and where the check goes instead', async () => {
    const tool = toolFromPlugin({ ...lookup, runtime }, { moduleUrl: fixture('async-refine-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { user: 'ada' } });
    expect(run.result).toEqual({
      ok: false,
      content: "error: lookup failed: its parameters schema has an async refine or transform, and arguments are parsed synchronously: check them in onEnd instead (it may be async)",
    });
  }, 60_000);
});
