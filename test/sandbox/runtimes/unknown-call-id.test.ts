import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually, pythonProtocolPlugin } from './runtime-test-helpers.ts';

// A plugin in another language that answers under a call id it was never given (a typo, its own
// counter, the request's tool call id in place of the wire id) had its answer dropped in silence:
// the call waited for the answer it was owed until its time limit (`timed out after N ms`), which
// says nothing of the mix-up. A process of runtime `process` serves its calls one at a time, so an
// id it was never given is a protocol error at once, naming the id.

let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_985_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** Answers each `piece` with a verdict and `end` with `reply` (a Python expression over `msg`). */
const answering = (reply: string): string[] =>
  pythonProtocolPlugin(['if msg["t"] == "piece":', '    send({"t": "verdict", "callId": msg["callId"], "seq": msg["seq"]})', 'elif msg["t"] == "end":', `    send(${reply})`]);

// A limit the old code ran into: the call then read `timed out after 3000 ms`.
const limited = { ...echo, limits: { ...echo.limits, timeoutMs: 3000 } };
const pieces = [{ kind: 'field' as const, path: ['text'], value: 'x' }];

describe('a plugin process that answers under a call id it was never given', () => {
  it('fails the call at once when it sends the result under another id', async () => {
    const tool = toolFromPlugin(limited, { command: answering('{"t": "result", "callId": "call_1", "ok": True, "content": "lost"}'), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .*"lost".* \(callId "call_1" names no call this process was given\)$/);
  });

  it('fails the call when it sends progress under another id', async () => {
    const reply = '[send({"t": "progress", "callId": "other", "progress": {"type": "unit-done", "detail": "x"}}), {"t": "result", "callId": msg["callId"], "ok": True, "content": "done"}][1]';
    const tool = toolFromPlugin(limited, { command: answering(reply), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    expect(run.progress).toEqual([]);
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .* \(callId "other" names no call this process was given\)$/);
  });

  it('leaves no process behind', async () => {
    expect(await eventually(() => pools.livePids().length === 0 && pools.process.stats.running === 0, 500)).toBe(true);
  });
});
