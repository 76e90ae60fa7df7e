import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolProgress } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import settings from './fixtures/schema-throws-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// The thread and process runtimes after the inline fix (e9260d0, inline-schema-throws.test.ts): a
// parameters schema that throws as it parses made end() reject in the gateway, past the call's
// bookkeeping; its clock ran on (onAbort 'timed out' a minute after the call had failed), its
// listener stayed on the request's signal, and onAbort never got the failure. Every runtime now
// ends such a call as inline does: `error: <tool> failed: …`, onAbort once with `failed: …`.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_610_000 } });
});

afterAll(async () => {
  await pools?.close();
});

describe.each(['inline', 'thread', 'process'] as const)('a parameters schema that throws, runtime %s', (runtime) => {
  it('ends the call with its error and onAbort once, and lets go of the request', async () => {
    const tool = toolFromPlugin({ ...settings, runtime }, { moduleUrl: fixture('schema-throws-plugin.ts'), pools });
    const progress: ToolProgress[] = [];
    const request = new AbortController();
    const execution = tool.start({ callId: 'call_1', signal: request.signal, emit: (p) => void progress.push(p) });
    const lines = (): string[] => progress.flatMap((p) => (p.type === 'unit-done' ? [p.detail] : []));
    // A process call that ends before it has its process never starts there (nor runs onAbort).
    await eventually(() => lines().length > 0, 2000);
    const result = await execution.end({ json: '{not json' });
    expect(result.ok).toBe(false);
    expect(result.content).toMatch(/^error: settings failed: (SyntaxError: )?.*JSON/);
    const reason = `failed: ${result.content.slice('error: settings failed: '.length)}`;
    await eventually(() => lines().length > 1, 2000);
    expect(lines()).toEqual(['onStart', `onAbort: ${reason}`]);
    // The call is over: nothing of it is left on the request's signal for a later abort to reach.
    expect(getEventListeners(request.signal, 'abort')).toHaveLength(0);
  });
});
