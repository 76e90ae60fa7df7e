import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import weather from '../../../plugins/kit/examples/location-check-plugin.ts';
import { createRuntimePools, definePlugin, inlineTool, parametersJsonSchema, reject, runScriptedCall, toolFromPlugin } from '../../../plugins/kit/index.ts';
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
});
