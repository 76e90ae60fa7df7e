import { expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';

// onAbort releases what onStart and onPiece took; a call that ends before its onStart began ran
// no hook, so it gets none, as a process call that never had its process (plugins/README.md,
// Hooks). An inline call aborted while it waited for the plugin's onLoad ran onAbort at once,
// for a call whose onStart never ran.
it('an inline call aborted while onLoad runs gets no onAbort, and the next call runs whole', async () => {
  const events: string[] = [];
  let loaded: () => void = () => undefined;
  const tool = inlineTool(
    definePlugin({
      name: 'slow_load',
      description: 'Waits for the test in onLoad (tests only)',
      parameters: z.object({}),
      consumes: 'call',
      hooks: {
        onLoad: () => new Promise<void>((resolve) => (loaded = resolve)),
        onStart: (ctx) => void events.push(`onStart ${ctx.callId}`),
        onEnd: (_args, ctx) => (events.push(`onEnd ${ctx.callId}`), 'done'),
        onAbort: (reason, ctx) => void events.push(`onAbort ${ctx.callId}: ${reason}`),
      },
    }),
  );
  const request = new AbortController();
  const early = runScriptedCall(tool, { callId: 'call_early', args: {} }, request.signal);
  request.abort();
  expect((await early).result).toMatchObject({ ok: false, content: 'error: slow_load was aborted: request aborted' });
  loaded();
  expect((await runScriptedCall(tool, { callId: 'call_late', args: {} })).result).toEqual({ ok: true, content: 'done' });
  expect(events).toEqual(['onStart call_late', 'onEnd call_late']);
});
