import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { runScriptedCall, type ScriptedCall, type ScriptedRun } from '../../../plugins/kit/testing.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';
import echo from '../../sandbox/runtimes/fixtures/echo-plugin.ts';
import onloadCount from '../../sandbox/runtimes/fixtures/onload-plugin.ts';

const moduleUrl = new URL('../../sandbox/runtimes/fixtures/echo-plugin.ts', import.meta.url);
const pythonPlugin = new URL('../../../plugins/kit/examples/echo_plugin.py', import.meta.url).pathname;
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { uidBase: 1_900_300_000 } });
});

afterAll(async () => {
  await pools?.close();
});

const script: ScriptedCall = {
  pieces: [
    { kind: 'field', path: ['text'], value: 'same everywhere' },
    { kind: 'field', path: ['delayMs'], value: 1 },
  ],
  args: { text: 'same everywhere', delayMs: 1 },
  callId: 'call_parity',
};

/** The runtime annotations differ by design; everything the model and client see must not. */
function comparable(run: ScriptedRun): ScriptedRun {
  const data = { ...run.result?.data };
  for (const key of ['runtime', 'requestedRuntime', 'fallbackReason']) delete data[key];
  return { ...run, ...(run.result ? { result: { ...run.result, data } } : {}) };
}

describe('toolFromPlugin', () => {
  it('gives the same verdicts, progress and result in every runtime', async () => {
    const expected = await runScriptedCall(toolFromPlugin({ ...echo, runtime: 'inline' }), script);
    expect(expected.result).toEqual({ ok: true, content: 'SAME EVERYWHERE', data: { pieces: 2, startedBy: 'call_parity' } });
    const tools = {
      thread: toolFromPlugin({ ...echo, runtime: 'thread' }, { moduleUrl, pools }),
      process: toolFromPlugin({ ...echo, runtime: 'process' }, { moduleUrl, pools }),
      isolate: toolFromPlugin({ ...echo, runtime: 'isolate' }, { moduleUrl, pools }),
      python: toolFromPlugin({ ...echo, runtime: 'process' }, { command: ['/usr/bin/python3', pythonPlugin], pools }),
    };
    for (const [runtime, tool] of Object.entries(tools)) {
      expect(comparable(await runScriptedCall(tool, script)), runtime).toEqual(expected);
    }
  });

  it('runs onLoad once where the calls run, before the first, in every runtime', async () => {
    const onloadUrl = new URL('../../sandbox/runtimes/fixtures/onload-plugin.ts', import.meta.url);
    for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
      const tool = toolFromPlugin({ ...onloadCount, runtime }, { moduleUrl: onloadUrl, pools });
      // Each answer is the number of onLoad runs in the process or worker that ran it.
      const answers = [await runScriptedCall(tool, { args: {} }), await runScriptedCall(tool, { args: {} })].map((r) => r.result?.content);
      expect(answers, runtime).toEqual(['1', '1']);
    }
  });

  it('rejects the same piece in every runtime', async () => {
    const bad: ScriptedCall = { pieces: [{ kind: 'field', path: ['text'], value: 'bad' }], args: { text: 'bad' } };
    for (const runtime of ['inline', 'thread', 'process', 'isolate'] as const) {
      const run = await runScriptedCall(toolFromPlugin({ ...echo, runtime }, { moduleUrl, pools }), bad);
      expect(run.rejected, runtime).toBe('the value "bad" is not allowed');
    }
  });

  it('answers invalid arguments with a tool error before any plugin code runs', async () => {
    const run = await runScriptedCall(toolFromPlugin(echo, { moduleUrl, pools }), { args: { text: 42 } });
    expect(run.result?.ok).toBe(false);
    expect(run.result?.content).toMatch(/^error: echo_sample got invalid arguments/);
  });

  it('says what is missing when a runtime cannot be set up', () => {
    expect(() => toolFromPlugin({ ...echo, runtime: 'thread' })).toThrow(/needs options.pools/);
    expect(() => toolFromPlugin({ ...echo, runtime: 'process' }, { pools })).toThrow(/needs options.moduleUrl/);
  });

  it('exposes the schema and piece kind the gateway sends upstream', () => {
    const tool = toolFromPlugin(echo, { moduleUrl, pools });
    expect(tool).toMatchObject({ name: 'echo_sample', consumes: 'field', runtime: 'process' });
    expect(tool.parameters).toMatchObject({ type: 'object', required: ['text'] });
  });
});
