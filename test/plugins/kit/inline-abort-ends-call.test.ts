import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { definePlugin } from '../../../plugins/kit/define-plugin.ts';
import { inlineTool } from '../../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../../plugins/kit/testing.ts';

// An inline call aborted (its client gone) while an onPiece was still running went on: the next
// piece's onPiece ran after onAbort, and so did onEnd, whose side effect (a message sent) happened
// for a request that was over and whose draft onAbort had already discarded. The thread and
// process runtimes end such a call `was aborted: request aborted`, running no hook after onAbort.

/** A mailer whose check of `to` waits for the test to let it go; it records each hook it runs. */
function mailer() {
  const hooks: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const checking = new Promise<void>((resolve) => (entered = resolve));
  const definition = definePlugin({
    name: 'mailer',
    description: 'Sends a message; checks the address as it is written',
    parameters: z.object({ to: z.string(), text: z.string() }),
    consumes: 'field',
    sideEffects: true,
    hooks: {
      onPiece: async (piece) => {
        if (piece.kind !== 'field') return;
        hooks.push(`onPiece ${piece.path.join('.')}`);
        if (piece.path[0] === 'to') {
          entered();
          await gate;
        }
      },
      onEnd: ({ to }) => {
        hooks.push('onEnd');
        return `sent to ${to}`;
      },
      onAbort: (reason) => {
        hooks.push(`onAbort ${reason}`);
      },
    },
  });
  return { tool: inlineTool(definition), hooks, release, checking };
}

const pieces = [
  { kind: 'field' as const, path: ['to'], value: 'bob' },
  { kind: 'field' as const, path: ['text'], value: 'hi' },
];

describe('an inline call aborted before onEnd begins', () => {
  it('runs no hook after onAbort, and end() answers the abort, as thread and process do', async () => {
    const { tool, hooks, release, checking } = mailer();
    const controller = new AbortController();
    const execution = tool.start({ callId: 'call_1', signal: controller.signal, emit: () => undefined });
    const first = execution.piece(pieces[0]!);
    await checking;
    controller.abort();
    release();
    expect(await first).toBeUndefined();
    expect(await execution.piece(pieces[1]!)).toBeUndefined();
    const result = await execution.end({ to: 'bob', text: 'hi' });
    expect(result).toEqual({ ok: false, content: 'error: mailer was aborted: request aborted', data: { code: 'aborted', runtime: 'inline' } });
    expect(hooks).toEqual(['onPiece to', 'onAbort request aborted']);
  });

  it("gives runScriptedCall's test the abort, not onEnd's result, when its signal aborts mid-call", async () => {
    const { tool, hooks, release, checking } = mailer();
    const controller = new AbortController();
    const run = runScriptedCall(tool, { pieces, args: { to: 'bob', text: 'hi' } }, controller.signal);
    await checking;
    controller.abort();
    release();
    expect((await run).result).toMatchObject({ ok: false, content: 'error: mailer was aborted: request aborted' });
    expect(hooks).not.toContain('onEnd');
  });

  it('still answers with onEnd when the abort comes after onEnd began', async () => {
    const controller = new AbortController();
    let aborted!: () => void;
    const abortedNow = new Promise<void>((resolve) => (aborted = resolve));
    const tool = inlineTool(
      definePlugin({
        name: 'slow_end',
        description: 'Answers with what it got done',
        parameters: z.object({ text: z.string() }),
        consumes: 'call',
        hooks: {
          onEnd: async ({ text }, ctx) => {
            controller.abort();
            await abortedNow;
            return `${text} (signal aborted: ${String(ctx.signal.aborted)})`;
          },
          onAbort: () => aborted(),
        },
      }),
    );
    const execution = tool.start({ callId: 'call_2', signal: controller.signal, emit: () => undefined });
    expect(await execution.end({ text: 'partial' })).toEqual({ ok: true, content: 'partial (signal aborted: true)' });
  });
});
