import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Piece } from '../../../parsers/parser-events.ts';
import { runScriptedCall, type ScriptedRun } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import type { ToolPlugin, ToolProgress } from '../../../plugins/plugin-types.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import { abortLine, abortReportPlugin } from './fixtures/abort-report-plugin.ts';
import { eventually, fixture } from './runtime-test-helpers.ts';

// plugins/README.md: ctx.signal is aborted and onAbort runs for every way a call ends other than
// onEnd finishing it, in every runtime. inline is the reference; thread and process must match it,
// reason for reason. In thread and process onAbort runs after the call's result is known, so each
// test waits for its progress line (the fixture's only channel out of the sandbox).
const RUNTIMES = ['inline', 'thread', 'process'] as const;
type Runtime = (typeof RUNTIMES)[number];
const CALL_ID = 'call_abort';
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 2 }, process: { uidBase: 1_900_600_000 } });
});

afterAll(async () => {
  await pools?.close();
});

function reportTool(runtime: Runtime, options: { query?: string; timeoutMs?: number; pools?: RuntimePools } = {}): ToolPlugin {
  const query = options.query ?? '';
  const definition = { ...abortReportPlugin(new URLSearchParams(query)), runtime, limits: { timeoutMs: options.timeoutMs ?? 20_000 } };
  return toolFromPlugin(definition, { moduleUrl: fixture(`abort-report-plugin.ts${query}`), pools: options.pools ?? pools });
}

const field = (value: string): Piece => ({ kind: 'field', path: ['mode'], value });
const onAbortLines = (progress: ToolProgress[]): string[] =>
  progress.flatMap((p) => (p.type === 'unit-done' && p.detail.startsWith('onAbort') ? [p.detail] : []));

/** Every progress event a scripted call's tool emitted: onAbort's come after the call's end in thread and process. */
const allProgress = (run: ScriptedRun): ToolProgress[] => [...run.progress, ...run.afterEnd];

/** onAbort's lines, once it has reported (it may run after the call's result). */
async function abortReports(source: ToolProgress[] | ScriptedRun): Promise<string[]> {
  const lines = () => onAbortLines(Array.isArray(source) ? source : allProgress(source));
  await eventually(() => lines().length > 0, 2000);
  return lines();
}

describe.each(RUNTIMES)('onAbort in runtime %s', (runtime) => {
  it('runs, with ctx.signal aborted and ctx.state kept, when onPiece returns a reject verdict', async () => {
    const run = await runScriptedCall(reportTool(runtime), { pieces: [field('reject')], args: { mode: 'reject' }, callId: CALL_ID });
    expect(run.rejected).toBe('not this one');
    expect(await abortReports(run)).toEqual([abortLine('rejected: not this one')]);
  });

  it('runs when onPiece throws, or returns something else than a verdict', async () => {
    const thrown = await runScriptedCall(reportTool(runtime), { pieces: [field('throw')], args: { mode: 'throw' }, callId: CALL_ID });
    expect(thrown.result).toEqual({ ok: false, content: 'error: abort_report failed: boom in onPiece' });
    expect(await abortReports(thrown)).toEqual([abortLine('failed: boom in onPiece')]);

    const wrong = await runScriptedCall(reportTool(runtime), { pieces: [field('return-string')], args: { mode: 'x' }, callId: CALL_ID });
    const error = `abort_report's onPiece returned "reject", not undefined or reject(reason)`;
    expect(wrong.result).toEqual({ ok: false, content: `error: ${error}` });
    expect(await abortReports(wrong)).toEqual([abortLine(error)]);
  });

  it('runs when onEnd overruns the time limit', async () => {
    const run = await runScriptedCall(reportTool(runtime, { timeoutMs: 500 }), { pieces: [field('fine')], args: { mode: 'hang' }, callId: CALL_ID });
    // thread adds how long the call waited for a worker, if it did (the reason onAbort gets stays as it is).
    expect(run.result).toMatchObject({ ok: false, content: expect.stringMatching(/^error: abort_report timed out after 500 ms( \(.+\))?$/), data: { code: 'sandbox_limit_exceeded' } });
    expect(await abortReports(run)).toEqual([abortLine('timed out after 500 ms')]);
  });

  it("runs when the request's signal aborts while onEnd runs", async () => {
    // inline still waits for a hook that runs on after an abort (it may answer with what it got
    // done); its time limit ends this one that never settles.
    const tool = reportTool(runtime, { timeoutMs: runtime === 'inline' ? 1000 : 20_000 });
    const controller = new AbortController();
    const progress: ToolProgress[] = [];
    const execution = tool.start({ callId: CALL_ID, signal: controller.signal, emit: (p) => progress.push(p) });
    const result = execution.end({ mode: 'hang' });
    expect(await eventually(() => progress.some((p) => p.type === 'unit-done' && p.detail === 'onEnd hangs'), 2000)).toBe(true);
    controller.abort();
    expect(await abortReports(progress)).toEqual([abortLine('request aborted')]);
    const expected = runtime === 'inline' ? 'timed out after 1000 ms' : 'was aborted: request aborted';
    expect(await result).toMatchObject({ ok: false, content: `error: abort_report ${expected}` });
  });

  it('runs when the arguments fail the schema', async () => {
    const run = await runScriptedCall(reportTool(runtime), { pieces: [field('fine')], args: { mode: 42 }, callId: CALL_ID });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'invalid_arguments' } });
    expect(await abortReports(run)).toEqual([abortLine('invalid arguments')]);
  });

  it('does not run when onEnd finishes the call', async () => {
    const run = await runScriptedCall(reportTool(runtime), { pieces: [field('fine')], args: { mode: 'fine' }, callId: CALL_ID });
    expect(run.result).toEqual({ ok: true, content: 'done: fine' });
    expect(allProgress(run)).toEqual([]);
  });
});

describe('an onAbort that never returns', () => {
  // Without the bound, the next call would wait for the only worker or process slot until its own
  // start limit (30 s) failed it.
  const bounded = {
    thread: { what: 'its worker', pools: () => createRuntimePools({ thread: { maxThreads: 1 } }) },
    process: { what: 'its process slot', pools: () => createRuntimePools({ process: { maxProcesses: 1, maxQueue: 1, sparesPerPlugin: 0, uidBase: 1_900_610_000 } }) },
  } as const;
  for (const runtime of ['thread', 'process'] as const) {
    it(`${runtime}: holds ${bounded[runtime].what} only for the grace, then the pool serves the next call`, async () => {
      const own = bounded[runtime].pools();
      try {
        const tool = reportTool(runtime, { query: '?onAbort=hang', pools: own });
        const rejected = await runScriptedCall(tool, { pieces: [field('reject')], args: { mode: 'reject' }, callId: CALL_ID });
        expect(await abortReports(rejected)).toEqual([abortLine('rejected: not this one')]);
        const next = await runScriptedCall(tool, { args: { mode: 'next' } });
        expect(next.result).toEqual({ ok: true, content: 'done: next' });
      } finally {
        await own.close();
      }
    });
  }
});
