import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import echoPy from '../../../plugins/kit/examples/echo-python-plugin.ts';
import js from '../../../plugins/kit/examples/js-eval-plugin.ts';
import weather from '../../../plugins/kit/examples/location-check-plugin.ts';
import outbox, { drafts, sent } from '../../../plugins/kit/examples/outbox-plugin.ts';
import wordCount from '../../../plugins/kit/examples/word-count-plugin.ts';
import { inlineTool } from '../../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../../plugins/kit/tool-from-plugin.ts';
import { loadPluginModule } from '../../../sandbox/runtimes/load-plugin-module.ts';
import { createRuntimePools, type RuntimePools } from '../../../sandbox/runtimes/runtime-pools.ts';

const example = (name: string): URL => new URL(`../../../plugins/kit/examples/${name}`, import.meta.url);
let pools: RuntimePools;

beforeAll(() => {
  pools = createRuntimePools({ process: { uidBase: 1_900_400_000 } });
});

afterAll(async () => {
  await pools?.close();
});

// The examples of plugins/README.md, run the way the README shows.
describe('authoring guide examples', () => {
  it('onPiece: rejects "Paris" at the location field, before the call is whole', async () => {
    const run = await runScriptedCall(inlineTool(weather), {
      pieces: [{ kind: 'field', path: ['location'], value: 'Paris' }],
      args: { location: 'Paris', unit: 'c' },
    });
    expect(run.rejected).toBe('location must look like "City, ST", got "Paris"');
    const ok = await runScriptedCall(inlineTool(weather), {
      pieces: [{ kind: 'field', path: ['location'], value: 'Austin, TX' }],
      args: { location: 'Austin, TX' },
    });
    expect(ok.result).toEqual({ ok: true, content: 'It is 21 degrees F in Austin, TX.' });
  });

  it('onStart/onEnd/onAbort: prepares at start, sends only at the end, discards on abort', async () => {
    const controller = new AbortController();
    const execution = inlineTool(outbox).start({ callId: 'call_draft', signal: controller.signal, emit: () => undefined });
    await Promise.resolve();
    expect(drafts.has('call_draft')).toBe(true);
    controller.abort();
    expect(drafts.has('call_draft')).toBe(false);
    expect(sent).toEqual([]);
    void execution;
    const run = await runScriptedCall(inlineTool(outbox), { args: { to: 'ana', text: 'hi' }, callId: 'call_send' });
    expect(run.result).toEqual({ ok: true, content: 'sent to ana' });
    expect(sent).toEqual([{ to: 'ana', text: 'hi' }]);
    expect(drafts.size).toBe(0);
  });

  it('runtime process: counts words line by line in a sandboxed process', async () => {
    const tool = toolFromPlugin(wordCount, { moduleUrl: example('word-count-plugin.ts'), pools });
    const run = await runScriptedCall(tool, {
      pieces: [
        { kind: 'line', text: 'one two three\n', lineNo: 1 },
        { kind: 'line', text: 'four', lineNo: 2 },
      ],
      args: { text: 'one two three\nfour' },
    });
    expect(run.progress).toEqual([
      { type: 'unit-done', detail: 'line 1: 3 words' },
      { type: 'unit-done', detail: 'line 2: 1 words' },
    ]);
    expect(run.result).toEqual({ ok: true, content: '4 words' });
  });

  // Regression: the README's way for other languages (a definition without hooks) threw in definePlugin.
  it('another language: the Python plugin runs from its defineCommandPlugin definition, in code and loaded as a module', async () => {
    const fromCode = toolFromPlugin(echoPy, { pools });
    const pieces = await runScriptedCall(fromCode, {
      pieces: [{ kind: 'field', path: ['text'], value: 'hi' }, { kind: 'field', path: ['other'], value: 'bad' }],
      args: { text: 'hi' },
    });
    expect(pieces.verdicts).toEqual([undefined, { verdict: 'reject', reason: 'the value "bad" is not allowed' }]);
    expect(pieces.progress).toEqual([{ type: 'unit-done', detail: 'field text' }]);
    // As `--tool plugins/kit/examples/echo-python-plugin.ts` loads it (gateway/tool-modules.ts).
    const moduleUrl = example('echo-python-plugin.ts').href;
    const loaded = toolFromPlugin(await loadPluginModule(moduleUrl), { moduleUrl, pools });
    expect(loaded.runtime).toBe('process');
    for (const tool of [fromCode, loaded]) {
      const run = await runScriptedCall(tool, { args: { text: 'py' }, callId: 'call_py' });
      expect(run.result).toEqual({ ok: true, content: 'PY', data: { pieces: 0, startedBy: 'call_py' } });
    }
  });

  it('runtime isolate: evaluates a model-written expression with a granted callback', async () => {
    const tool = toolFromPlugin(js, { moduleUrl: example('js-eval-plugin.ts'), pools });
    const run = await runScriptedCall(tool, { args: { expression: '2 * (await price("bread")) + (await price("milk"))' } });
    expect(run.result).toMatchObject({ ok: true, content: '5.7' });
  });
});
