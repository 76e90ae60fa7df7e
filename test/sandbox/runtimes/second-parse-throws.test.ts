import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolProgress } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// Set before the fixture is imported: the gateway's realm counts its parses, a worker's or a
// plugin process's has no such global and throws at once.
(globalThis as { __gatewayParses?: Map<string, number> }).__gatewayParses = new Map();
const { default: definition } = await import('./fixtures/second-parse-throws-plugin.ts');

// runEndHook parsed the arguments a second time (where onEnd runs) with a bare safeParse: a schema
// that passed the gateway's parse and threw there escaped it. A plugin process died of the
// unhandled rejection (`stopped: it exited with code 1`), a worker's call read as a failure without
// onAbort. Now the second parse's throw ends the call as the first's does (schema-throws.test.ts):
// `error: <tool> failed: <message>`, and onAbort runs once with `failed: <message>`.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { uidBase: 1_900_620_000 } });
});

afterAll(async () => {
  await pools?.close();
});

describe.each(['inline', 'thread', 'process'] as const)('a schema that throws only on its second parse, runtime %s', (runtime) => {
  it('fails the call as a hook throw does, and onAbort runs once', async () => {
    const tool = toolFromPlugin({ ...definition, runtime }, { moduleUrl: fixture('second-parse-throws-plugin.ts'), pools });
    const progress: ToolProgress[] = [];
    const execution = tool.start({ callId: 'call_1', signal: new AbortController().signal, emit: (p) => void progress.push(p) });
    const lines = (): string[] => progress.flatMap((p) => (p.type === 'unit-done' ? [p.detail] : []));
    await eventually(() => lines().length > 0, 2000);
    const result = await execution.end({ id: runtime });
    expect(result).toMatchObject({ ok: false, content: 'error: second_parse failed: the schema threw on its second parse' });
    await eventually(() => lines().length > 1, 2000);
    expect(lines()).toEqual(['onStart', 'onAbort: failed: the schema threw on its second parse']);
  });
});
