import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually } from './runtime-test-helpers.ts';

// Progress a plugin process wrote after its call's result (a one-shot program that reports a last
// unit after answering, a JS timer its onEnd left behind) reached the request as the call's own
// progress whenever the gateway read it in the same chunk as the result: the call stayed routed
// until a microtask later. In a later chunk it was dropped, so what the client saw depended on
// how the bytes were split. A call says nothing more once its result is in, as in every runtime
// (the gateway's Dispatcher drops progress after a call has ended).

let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_985_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** Answers `end` with its result and, in the same write, progress for the same call. */
const lateReporter = [
  '/usr/bin/python3',
  '-c',
  [
    'import json, os, socket, time',
    'ch = socket.socket(fileno=3)',
    'line = lambda m: (json.dumps(m) + "\\n").encode()',
    'ch.sendall(line({"t": "ready", "pid": os.getpid(), "guest": "none"}))',
    'for raw in ch.makefile("r", encoding="utf-8"):',
    '    msg = json.loads(raw)',
    '    if msg["t"] == "end":',
    '        call = msg["callId"]',
    '        early = line({"t": "progress", "callId": call, "progress": {"type": "unit-done", "detail": "before"}})',
    '        result = line({"t": "result", "callId": call, "ok": True, "content": "done"})',
    '        late = line({"t": "progress", "callId": call, "progress": {"type": "unit-done", "detail": "after the result"}})',
    '        ch.sendall(early + result + late)',
    '        time.sleep(30)',
  ].join('\n'),
];

describe('a plugin process that sends progress after its result', () => {
  it('has only the progress before the result reach the call', async () => {
    const run = await runScriptedCall(toolFromPlugin(echo, { command: lateReporter, pools }), { args: { text: 'x' } });
    expect(run.result).toEqual({ ok: true, content: 'done' });
    expect(run.progress).toEqual([{ type: 'unit-done', detail: 'before' }]);
    expect(run.afterEnd).toEqual([]);
    // The process is killed once the call is over, its sleep notwithstanding.
    expect(await eventually(() => pools.livePids().length === 0 && pools.process.stats.running === 0, 500)).toBe(true);
  });
});
