import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from './fixtures/echo-plugin.ts';
import { eventually } from './runtime-test-helpers.ts';

// A plugin in another language whose message had the wrong shape (a Python dict as `content`,
// `"content": None`, a misspelt `t`, a `ready` without `guest`) was killed with only its line quoted:
// `stopped: protocol error: {"t": "result", …}`, leaving its author to diff it against the schema.
// The error now says which field is wrong and how, after the line.

let pools: RuntimePools;

beforeAll(() => {
  // Spares off: each call starts the one process it reports on.
  pools = createRuntimePools({ process: { sparesPerPlugin: 0, uidBase: 1_900_980_000 } });
});

afterAll(async () => {
  await pools?.close();
});

/** A Python program that says `ready` (or `readyLine`) and answers `end` with `reply` (a Python expression). */
const program = (reply: string, readyLine = '{"t": "ready", "pid": os.getpid(), "guest": "none"}'): string[] => [
  '/usr/bin/python3',
  '-c',
  [
    'import json, os, socket',
    'ch = socket.socket(fileno=3)',
    'send = lambda m: ch.sendall((m if isinstance(m, str) else json.dumps(m)).encode() + b"\\n")',
    `send(${readyLine})`,
    'for line in ch.makefile("r", encoding="utf-8"):',
    '    msg = json.loads(line)',
    '    if msg["t"] == "end":',
    `        send(${reply})`,
  ].join('\n'),
];

const run = (command: string[]) => runScriptedCall(toolFromPlugin(echo, { command, pools }), { args: { text: 'x' } }).then((r) => r.result);

describe('a plugin process that sends a message of the wrong shape', () => {
  it.for([
    ['a content that is no string', '{"t": "result", "callId": msg["callId"], "ok": True, "content": {"a": 1}}', '(content: expected string, received object)'],
    // None for an optional field reads as absent (plugin-protocol.test.ts); a required one stays refused.
    ['content: None', '{"t": "result", "callId": msg["callId"], "ok": True, "content": None}', '(content: expected string, received null)'],
    ['a data that is a string', '{"t": "result", "callId": msg["callId"], "ok": True, "content": "x", "data": "rows"}', '(data: expected object, received string)'],
    ['an ok that is a string', '{"t": "result", "callId": msg["callId"], "ok": "true", "content": "x"}', '(ok: expected boolean, received string)'],
    ['an unknown message type', '{"t": "log", "callId": msg["callId"]}', '(t: "log" is not a message type: ready, loaded, progress, verdict, result, failed, aborted)'],
    ['no message type', '{"callId": msg["callId"]}', '(t: missing: ready, loaded, progress, verdict, result, failed, aborted)'],
    ['a JSON array', '[1, 2]', '(expected an object, received array)'],
    ['a line that is not JSON', '"oops"', '(not JSON)'],
  ] as const)('is told what is wrong with it: %s', async ([, reply, why]) => {
    const result = await run(program(reply));
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error', runtime: 'process' } });
    // The line is still quoted first, then why it was refused.
    expect(result?.content).toMatch(/^error: echo_sample stopped: protocol error: /);
    expect(result?.content.endsWith(` ${why}`)).toBe(true);
  });

  it('is told what is wrong with its ready message', async () => {
    const result = await run(program('"unused"', '{"t": "ready", "pid": os.getpid()}'));
    expect(result).toMatchObject({ ok: false, data: { code: 'sandbox_error' } });
    expect(result?.content).toMatch(/^error: echo_sample failed: the plugin process did not start: unexpected message: \{"t": "ready", "pid": \d+\} /);
    expect(result?.content).toContain('(guest: expected one of "isolated-vm"|"node-vm"|"none")');
  });

  it('leaves no process behind', async () => {
    expect(await eventually(() => pools.livePids().length === 0 && pools.process.stats.running === 0, 500)).toBe(true);
  });
});
