import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { MAX_THROWN_MESSAGE } from '../../../core/errors/tool-errors.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import longThrow from './fixtures/long-throw-plugin.ts';
import { fixture } from './runtime-test-helpers.ts';

// A hook that throws an Error with a 9 MB message: inline and in a thread the model read all
// 9 MB as the tool's error; in a plugin process the `failed` message broke the protocol's 8 MiB
// line limit and the call read `stopped: protocol error: a message over 8 MiB …`. The message
// is now cut where it is read (thrownMessage), the same in every runtime, saying so.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_620_000 } });
});

afterAll(async () => {
  await pools?.close();
});

const SIZE = 9 * 1024 * 1024;

describe.each(['inline', 'thread', 'process'] as const)('a hook that throws a 9 MB message, runtime %s', (runtime) => {
  it('fails the call with the message cut, saying where', async () => {
    const tool = toolFromPlugin({ ...longThrow, runtime }, { moduleUrl: fixture('long-throw-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { size: SIZE } });
    const content = run.result?.content ?? '';
    expect(run.result?.ok).toBe(false);
    expect(content.startsWith('error: long_throw failed: bad input: xxx')).toBe(true);
    expect(content).toMatch(new RegExp(` \\[…; the message was ${SIZE} characters, cut at ${MAX_THROWN_MESSAGE}\\]$`));
    expect(content.length).toBeLessThan(MAX_THROWN_MESSAGE + 200);
  }, 60_000);
});
