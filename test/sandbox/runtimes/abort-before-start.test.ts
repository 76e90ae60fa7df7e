import { afterAll, beforeAll, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolProgress } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import abortReport from './fixtures/abort-report-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// onAbort releases what onStart and onPiece took (plugins/README.md, Hooks), and a process call
// that ends before it has its process runs neither. A thread call aborted while its onStart still
// waited for a worker ran onAbort anyway, in a task of its own, for a call whose onStart never
// ran (ctx.state empty: `started by undefined`). Now it runs no hook, as in process.
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 } });
});

afterAll(async () => {
  await pools?.close();
});

const details = (progress: ToolProgress[]): string[] => progress.flatMap((p) => (p.type === 'unit-done' ? [p.detail] : []));

it('a thread call aborted before a worker began its onStart runs no onAbort', async () => {
  const tool = toolFromPlugin({ ...abortReport, runtime: 'thread' }, { moduleUrl: fixture('abort-report-plugin.ts'), pools });
  const busy: ToolProgress[] = [];
  const first = tool.start({ callId: 'call_busy', signal: new AbortController().signal, emit: (p) => void busy.push(p) });
  const firstEnd = first.end({ mode: 'until-aborted' });
  // The one worker is in the first call's onEnd: the second call's onStart waits in the queue.
  expect(await eventually(() => details(busy).includes('onEnd waits for the signal'), 2000)).toBe(true);
  const queued: ToolProgress[] = [];
  const second = tool.start({ callId: 'call_queued', signal: new AbortController().signal, emit: (p) => void queued.push(p) });
  second.abort('request aborted');
  first.abort('request aborted');
  await firstEnd;
  // The first call's onAbort was queued after anything of the second's: once it has run, so would have the second's.
  expect(await eventually(() => details(busy).some((d) => d.startsWith('onAbort:')), 2000)).toBe(true);
  expect(details(queued)).toEqual([]);
});
