import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROGRESS_EVENTS } from '../../../plugins/progress-budget.ts';
import type { ToolPlugin, ToolProgress, ToolResult } from '../../../plugins/plugin-types.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import flood from './fixtures/progress-flood-plugin.ts';
import { fixture, pythonProtocolPlugin } from './runtime-test-helpers.ts';

// A plugin process's progress past its call's budget (plugins/progress-budget.ts) was dropped by
// the gateway's Dispatcher, but only after every line of it had been read as JSON and checked
// against the protocol's schema on the gateway's event loop: a plugin writing progress without end
// cost the gateway CPU in proportion. Past the budget, the call's progress lines are now dropped
// unparsed, so the call hears at most the budget and the one event that goes past it (the
// Dispatcher's note stands in for that one).

let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ thread: { maxThreads: 1 }, process: { sparesPerPlugin: 0, uidBase: 1_900_975_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** One call driven by hand (not runScriptedCall, whose budget would hide what the runtime passed on). */
async function call(tool: ToolPlugin, args: Record<string, unknown>): Promise<{ result: ToolResult; progress: ToolProgress[] }> {
  const progress: ToolProgress[] = [];
  const execution = tool.start({ callId: 'call_flood', signal: new AbortController().signal, emit: (p) => progress.push(p) });
  const result = await execution.end(args);
  return { result, progress };
}

describe('a plugin process that floods its call with progress', () => {
  it('passes on no more events than the budget and one, and its calls still end with their results', async () => {
    const tool = toolFromPlugin(flood, { moduleUrl: fixture('progress-flood-plugin.ts'), pools });
    const first = await call(tool, { events: 3 * MAX_PROGRESS_EVENTS });
    expect(first.result).toEqual({ ok: true, content: 'done' });
    expect(first.progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
    expect(first.progress.at(-1)).toEqual({ type: 'unit-done', detail: `unit ${MAX_PROGRESS_EVENTS}` });
    // The next call has a budget of its own.
    const second = await call(tool, { events: 2 });
    expect(second).toEqual({ result: { ok: true, content: 'done' }, progress: [{ type: 'unit-done', detail: 'unit 0' }, { type: 'unit-done', detail: 'unit 1' }] });
  });

  it('counts the characters of output too: past 1 MiB of text the rest is not read', async () => {
    const tool = toolFromPlugin(flood, { moduleUrl: fixture('progress-flood-plugin.ts'), pools });
    const run = await call(tool, { events: 6, textChars: 600_000 });
    expect(run.result).toEqual({ ok: true, content: 'done' });
    expect(run.progress.map((p) => (p.type === 'output' ? p.text.length : p.detail))).toEqual([600_000, 600_000]);
  });

  // Unread, so a line of no known shape among them is no protocol error any more: that is how the
  // test sees they were not parsed (one read would kill the process and fail the call).
  it('drops the lines unread however the program spaces its JSON (Python json.dumps)', async () => {
    const command = pythonProtocolPlugin([
      'if msg["t"] == "end":',
      '    for i in range(3 * ' + String(MAX_PROGRESS_EVENTS) + '):',
      '        send({"t": "progress", "callId": msg["callId"], "progress": {"type": "unit-done", "detail": str(i)}})',
      '    send({"t": "progress", "callId": msg["callId"], "progress": {"type": "no such type"}})',
      '    send({"t": "result", "callId": msg["callId"], "ok": True, "content": "done"})',
    ]);
    const tool = toolFromPlugin(flood, { command, pools });
    const run = await call(tool, { events: 1 });
    expect(run.result).toEqual({ ok: true, content: 'done' });
    expect(run.progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
  });

  it('drops the lines unread whatever order the program writes their keys in (json.dumps sort_keys=True)', async () => {
    // The regression: only a head with t first and callId next was matched, so these lines were
    // parsed, and the one of no known shape was a protocol error that killed the process.
    const command = pythonProtocolPlugin([
      'if msg["t"] == "end":',
      '    sorted_send = lambda m: ch.sendall((json.dumps(m, sort_keys=True) + "\\n").encode())',
      '    for i in range(3 * ' + String(MAX_PROGRESS_EVENTS) + '):',
      '        sorted_send({"t": "progress", "callId": msg["callId"], "progress": {"type": "unit-done", "detail": str(i)}})',
      '    sorted_send({"t": "progress", "callId": msg["callId"], "progress": {"type": "no such type"}})',
      '    sorted_send({"t": "result", "callId": msg["callId"], "ok": True, "content": "done"})',
    ]);
    const tool = toolFromPlugin(flood, { command, pools });
    const run = await call(tool, { events: 1 });
    expect(run.result).toEqual({ ok: true, content: 'done' });
    expect(run.progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
  });

  // A worker's progress is posted to the gateway's thread (each message copied in and checked
  // there): past the call's budget the worker stops posting it, across the call's hooks.
  it('in runtime thread, the call hears no more than the budget and one', async () => {
    const tool = toolFromPlugin({ ...flood, runtime: 'thread' }, { moduleUrl: fixture('progress-flood-plugin.ts'), pools });
    const first = await call(tool, { events: 3 * MAX_PROGRESS_EVENTS });
    expect(first.result).toEqual({ ok: true, content: 'done' });
    expect(first.progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
    const text = await call(tool, { events: 6, textChars: 600_000 });
    expect(text.progress.map((p) => (p.type === 'output' ? p.text.length : p.detail))).toEqual([600_000, 600_000]);
  });

  it('in runtime thread, a hook told the call has spent its budget posts nothing, one told it has not posts up to it and one', async () => {
    const hook = async (progressUsed: { events: number; text: number }): Promise<number> => {
      let posted = 0;
      const task = { module: String(fixture('progress-flood-plugin.ts')), plugin: 'progress_flood', hook: 'end' as const, callId: 'call_flood', state: {}, args: { events: 2 * MAX_PROGRESS_EVENTS }, progressUsed };
      const result = await pools.thread.run(task, () => void posted++, new AbortController().signal);
      expect(result.result).toEqual({ ok: true, content: 'done' });
      return posted;
    };
    expect(await hook({ events: 0, text: 0 })).toBe(MAX_PROGRESS_EVENTS + 1);
    expect(await hook({ events: MAX_PROGRESS_EVENTS - 5, text: 0 })).toBe(6);
    expect(await hook({ events: MAX_PROGRESS_EVENTS + 1, text: 0 })).toBe(0);
  });
});
