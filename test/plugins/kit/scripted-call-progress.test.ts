import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';
import { MAX_PROGRESS_EVENTS } from '../../../plugins/progress-budget.ts';

// runScriptedCall's `progress` is what the gateway would pass on to the client. It used to keep
// everything a tool emitted, also after the call had ended (a timer its hook left behind) and past
// the per-call budget, so a tool author's test passed on progress the model's client never sees.

describe('runScriptedCall progress', () => {
  it('keeps what a tool emits after its call has ended apart: the gateway drops it', async () => {
    let late!: () => void;
    const lateEmitted = new Promise<void>((resolve) => (late = resolve));
    const tool = inlineTool(
      definePlugin({
        name: 'echo_later',
        description: 'Echoes; leaves a timer behind that emits once more',
        parameters: z.object({ text: z.string() }),
        consumes: 'call',
        hooks: {
          onEnd: ({ text }, ctx) => {
            ctx.emit({ type: 'unit-done', detail: 'echoed' });
            setTimeout(() => {
              ctx.emit({ type: 'unit-done', detail: 'after the end' });
              late();
            }, 5);
            return text;
          },
        },
      }),
    );
    const run = await runScriptedCall(tool, { args: { text: 'hi' } });
    await lateEmitted;
    expect(run.result).toEqual({ ok: true, content: 'hi' });
    expect(run.progress).toEqual([{ type: 'unit-done', detail: 'echoed' }]);
    expect(run.afterEnd).toEqual([{ type: 'unit-done', detail: 'after the end' }]);
  });

  it('stops at the per-call budget with the note the client would read', async () => {
    const tool = inlineTool(
      definePlugin({
        name: 'chatty',
        description: 'Emits more progress than a call may',
        parameters: z.object({}),
        consumes: 'call',
        hooks: {
          onEnd: (_args, ctx) => {
            for (let i = 0; i < MAX_PROGRESS_EVENTS + 50; i++) ctx.emit({ type: 'unit-done', detail: `step ${i}` });
            return 'done';
          },
        },
      }),
    );
    const run = await runScriptedCall(tool, { args: {} });
    expect(run.progress).toHaveLength(MAX_PROGRESS_EVENTS + 1);
    expect(run.progress.at(-1)).toMatchObject({ type: 'output', stream: 'stderr', text: expect.stringMatching(/the rest is not shown/) });
  });
});
