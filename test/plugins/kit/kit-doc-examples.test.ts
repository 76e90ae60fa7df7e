import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import weather from '../../../plugins/kit/examples/location-check-plugin.ts';
import { createRuntimePools, definePlugin, inlineTool, parametersJsonSchema, reject, runScriptedCall, toolFromPlugin, type PluginContext, type PluginRuntime, type RuntimeTool } from '../../../plugins/kit/index.ts';
import guestEval from './fixtures/doc-guest-error-plugin.ts';
import wordCount from './fixtures/doc-word-count-plugin.ts';

// The @example of each exported kit symbol, run as written: a doc example that does not run
// teaches the wrong thing to every author who copies it.
const pools = createRuntimePools({ process: { uidBase: 1_900_450_000 } });
afterAll(() => pools.close());

describe('kit doc-comment examples', () => {
  it('definePlugin: shout rejects an empty text at its field and upper-cases the rest', async () => {
    const shout = definePlugin({
      name: 'shout',
      description: 'Upper-cases a text',
      parameters: z.object({ text: z.string() }),
      consumes: 'field',
      hooks: {
        onPiece: (piece) => (piece.kind === 'field' && piece.value === '' ? reject('empty text') : undefined),
        onEnd: ({ text }) => text.toUpperCase(),
      },
    });
    const empty = await runScriptedCall(inlineTool(shout), { pieces: [{ kind: 'field', path: ['text'], value: '' }], args: { text: '' } });
    expect(empty.rejected).toBe('empty text');
    const hi = await runScriptedCall(inlineTool(shout), { pieces: [{ kind: 'field', path: ['text'], value: 'hi' }], args: { text: 'hi' } });
    expect(hi.result).toEqual({ ok: true, content: 'HI' });
  });

  it('reject: a year past 2100 is refused at its field, with the reason the model reads', async () => {
    const tool = inlineTool(definePlugin({
      name: 'calendar', description: 'Days in a year', parameters: z.object({ year: z.number() }),
      consumes: 'field',
      hooks: {
        onPiece: (piece) => (piece.kind === 'field' && piece.path[0] === 'year' && Number(piece.value) > 2100
          ? reject('year must be 2100 or earlier')
          : undefined),
        onEnd: ({ year }) => String(year % 4 === 0 ? 366 : 365),
      },
    }));
    const late = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['year'], value: 2200 }], args: { year: 2200 } });
    expect(late.rejected).toBe('year must be 2100 or earlier');
    const ok = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['year'], value: 2024 }], args: { year: 2024 } });
    expect(ok.result).toEqual({ ok: true, content: '366' });
  });

  it('parametersJsonSchema: the input side, a defaulted field not required, no $schema', () => {
    expect(parametersJsonSchema({ parameters: z.object({ text: z.string(), times: z.number().default(1) }) })).toEqual({
      type: 'object',
      properties: { text: { type: 'string' }, times: { default: 1, type: 'number' } },
      required: ['text'],
    });
  });

  it('inlineTool: run.result.content is HI', async () => {
    const tool = inlineTool(definePlugin({
      name: 'shout', description: 'Upper-cases a text', parameters: z.object({ text: z.string() }),
      consumes: 'call', hooks: { onEnd: ({ text }) => text.toUpperCase() },
    }));
    const run = await runScriptedCall(tool, { args: { text: 'hi' } });
    expect(run.result?.content).toBe('HI');
  });

  // Regression: the example fed a `city` field to a plugin that checks `location`, so it never rejected.
  it('runScriptedCall: the location-check example rejects "Paris" at the field, onEnd unrun', async () => {
    const run = await runScriptedCall(inlineTool(weather), {
      pieces: [{ kind: 'field', path: ['location'], value: 'Paris' }],
      args: { location: 'Paris' },
    });
    expect(run.rejected).toMatch(/City, ST/);
    expect(run.result).toBeUndefined();
  });

  it('plugins/README.md Testing: toolFromPlugin(weather, { moduleUrl, pools }) rejects Paris', async () => {
    const tool = toolFromPlugin(weather, { moduleUrl: new URL('../../../plugins/kit/examples/location-check-plugin.ts', import.meta.url), pools });
    const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['location'], value: 'Paris' }], args: { location: 'Paris' } });
    expect(run.rejected).toMatch(/City, ST/);
  });

  it('toolFromPlugin: the process word_count counts the words', async () => {
    const tool = toolFromPlugin(wordCount, { moduleUrl: new URL('./fixtures/doc-word-count-plugin.ts', import.meta.url), pools });
    const run = await runScriptedCall(tool, { args: { text: 'one two  three' } });
    expect(run.result).toMatchObject({ ok: true, content: '3' });
  });

  it('PluginRuntime: run_sql asks for the sandbox, with limits only process honours', async () => {
    const runtime: PluginRuntime = 'process';
    const definition = definePlugin({ name: 'run_sql', description: 'Runs a read-only SQL query', parameters: z.object({ query: z.string() }),
      consumes: 'field', runtime, limits: { timeoutMs: 5000, memoryMb: 128 }, hooks: { onEnd: ({ query }) => query } });
    expect(definition.runtime).toBe('process');
  });

  it("PluginContext: a call's state counts its pieces, emit reports each, signal is not aborted in onEnd", async () => {
    const tool = inlineTool(definePlugin({
      name: 'pieces', description: 'Counts pieces', parameters: z.object({ a: z.number(), b: z.number() }), consumes: 'field',
      hooks: {
        onPiece: (piece, ctx: PluginContext) => {
          ctx.state['pieces'] = Number(ctx.state['pieces'] ?? 0) + 1; // this call's alone
          ctx.emit({ type: 'unit-done', detail: `piece ${String(ctx.state['pieces'])} of ${ctx.callId}` });
        },
        onEnd: (args, ctx) => (ctx.signal.aborted ? 'stopped' : `${String(ctx.state['pieces'] ?? 0)} pieces`),
      },
    }));
    const run = await runScriptedCall(tool, { pieces: [{ kind: 'field', path: ['a'], value: 1 }, { kind: 'field', path: ['b'], value: 2 }], args: { a: 1, b: 2 }, callId: 'call_1' });
    expect(run.progress).toEqual([{ type: 'unit-done', detail: 'piece 1 of call_1' }, { type: 'unit-done', detail: 'piece 2 of call_1' }]);
    expect(run.result).toEqual({ ok: true, content: '2 pieces' });
  });

  it('GuestError: a guest past its timeoutMs is kind timeout, answered as the example does', async () => {
    const tool = toolFromPlugin(guestEval, { moduleUrl: new URL('./fixtures/doc-guest-error-plugin.ts', import.meta.url), pools });
    expect((await runScriptedCall(tool, { args: { code: 'while (true) {}' } })).result).toMatchObject({ ok: false, content: 'the code ran past 50 ms' });
    expect((await runScriptedCall(tool, { args: { code: '6 * 7' } })).result).toMatchObject({ ok: true, content: '42' });
  });

  it('RuntimeTool: warm() starts a spare process and runtime says which one the definition asked for', async () => {
    const moduleUrl = new URL('./fixtures/doc-word-count-plugin.ts', import.meta.url);
    const tool: RuntimeTool = toolFromPlugin(wordCount, { moduleUrl, pools });
    tool.warm();
    expect(tool.runtime).toBe('process');
    expect((await runScriptedCall(tool, { args: { text: 'a b' } })).result).toMatchObject({ ok: true, content: '2' });
  });
});
