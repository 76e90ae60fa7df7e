import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually, pythonProtocolPlugin } from './runtime-test-helpers.ts';

// A plugin in another language that answers a message with the wrong kind of answer (a `result`
// for a `piece`, a `verdict` for `end`) had its answer dropped in silence: the call waited for the
// answer it was owed until its time limit (`timed out after 20000 ms`), which says nothing of the
// mix-up. Such an answer is now a protocol error at once, naming what was out of turn.

let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_987_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** Answers every `piece` and `end` with `reply` (a Python expression over `msg`). */
const answering = (reply: string): string[] => pythonProtocolPlugin(['if msg["t"] in ("piece", "end"):', `    send(${reply})`]);

const pieces = [{ kind: 'field' as const, path: ['text'], value: 'x' }];

describe('a plugin process that answers out of turn', () => {
  it('fails the call when it answers a piece with a result', async () => {
    const tool = toolFromPlugin(echo, { command: answering('{"t": "result", "callId": msg["callId"], "ok": True, "content": "too soon"}'), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .*"too soon".* \(a result before the call's end was sent: answer each piece with a verdict\)$/);
  });

  it('fails the call when it answers end with a verdict', async () => {
    const tool = toolFromPlugin(echo, { command: answering('{"t": "verdict", "callId": msg["callId"], "seq": msg.get("seq", 0)}'), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    // The piece's own verdict was in turn.
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .* \(a verdict for piece 0, which awaits none: answer end with a result\)$/);
  });

  // As the kit's verdictOf refuses reject('') from a JS plugin: the model would read
  // "rejected the call: " and nothing on what to write instead.
  it('fails the call when it rejects a piece with an empty reason', async () => {
    const reply = '{"t": "verdict", "callId": msg["callId"], "seq": msg.get("seq", 0), "reject": " "} if msg["t"] == "piece" else {"t": "result", "callId": msg["callId"], "ok": True, "content": "done"}';
    const tool = toolFromPlugin(echo, { command: answering(reply), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    // No reject reached the decode: the call failed instead.
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .*reject.*no reason/);
  });

  // Both lines in one write, so the gateway reads them in one chunk: the kill for the first did not
  // stop the rest of that chunk, and the result behind it still ended the call `ok`.
  it('fails the call when an answer out of turn comes in the same write as its result', async () => {
    const reply = '[ch.sendall((json.dumps({"t": "verdict", "callId": msg["callId"], "seq": 7}) + "\\n" + json.dumps({"t": "result", "callId": msg["callId"], "ok": True, "content": "done"}) + "\\n").encode()), {"t": "progress", "callId": msg["callId"], "progress": {"type": "unit-done", "detail": "late"}}][1] if msg["t"] == "end" else {"t": "verdict", "callId": msg["callId"], "seq": msg["seq"]}';
    const tool = toolFromPlugin(echo, { command: answering(reply), pools });
    const run = await runScriptedCall(tool, { pieces, args: { text: 'x' } });
    expect(run.result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    expect(run.result?.content).toMatch(/^error: echo_sample stopped: protocol error: .* \(a verdict for piece 7, which awaits none: answer end with a result\)$/);
  });

  it('leaves no process behind', async () => {
    expect(await eventually(() => pools.livePids().length === 0 && pools.process.stats.running === 0, 500)).toBe(true);
  });
});
