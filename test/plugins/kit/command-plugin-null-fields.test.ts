import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntimePools, defineCommandPlugin, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';

// A Python plugin wrote `'reject': None` to accept a piece and `'data': None` for a result without
// data: each was a protocol error that killed the process, so the accepted piece failed the call.
// None for an optional field now reads as the field left out.
const pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_645_000 } });
afterAll(() => pools.close());

const program = [
  'import json, os, socket',
  'ch = socket.socket(fileno=3)',
  'send = lambda m: ch.sendall(json.dumps(m).encode() + b"\\n")',
  'send({"t": "ready", "pid": os.getpid(), "guest": "none", "guestError": None})',
  'for line in ch.makefile("r", encoding="utf-8"):',
  '    msg = json.loads(line)',
  '    if msg["t"] == "piece":',
  '        bad = msg["piece"]["value"] == "bad"',
  '        send({"t": "verdict", "callId": msg["callId"], "seq": msg["seq"], "reject": "not bad" if bad else None})',
  '    elif msg["t"] == "end":',
  '        send({"t": "result", "callId": msg["callId"], "ok": True, "content": msg["args"]["text"].upper(), "data": None, "cpuMs": None, "thrown": None})',
  '    elif msg["t"] == "abort":',
  '        send({"t": "aborted", "callId": msg["callId"]})',
].join('\n');

const tool = toolFromPlugin(
  defineCommandPlugin({
    name: 'upper_py',
    description: 'Upper-cases a text',
    parameters: z.object({ text: z.string() }),
    consumes: 'field',
    limits: { timeoutMs: 10_000 },
    command: ['/usr/bin/python3', '-c', program],
  }),
  { pools },
);

it("a Python plugin's None for reject, data, cpuMs and thrown is an accept and a plain result", async () => {
  const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['text'], value: 'hi' }], args: { text: 'hi' } });
  expect(run.verdicts).toEqual([undefined]);
  expect(run.rejected).toBeUndefined();
  expect(run.result).toEqual({ ok: true, content: 'HI' });
});

it('a reason given in the same place is still a rejection', async () => {
  const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['text'], value: 'bad' }], args: { text: 'bad' } });
  expect(run.rejected).toBe('not bad');
  expect(run.result).toBeUndefined();
});
