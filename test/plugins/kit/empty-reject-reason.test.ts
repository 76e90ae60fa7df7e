import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { definePlugin, inlineTool, reject, runScriptedCall } from '../../../plugins/kit/index.ts';
import { verdictOf } from '../../../plugins/kit/check-hook-output.ts';

// A reject whose reason is empty ('' from a forgotten message, `reject(err.message ?? '')`) cut the
// decode and the model read "error: check rejected the call: ", with nothing on what to change; the
// client-side calls' bookkeeping (gateway/client-calls.ts) even reads an empty reason as no reject.
describe('a reject with no reason', () => {
  it('is the plugin\'s error, saying so, in the words every runtime checks with (verdictOf)', () => {
    expect(verdictOf('check', reject(''))).toEqual({ error: `error: check's onPiece returned reject(""), with no reason: the model reads the reason to know what to write instead` });
    expect(verdictOf('check', reject('  \n'))).toEqual({ error: `error: check's onPiece returned reject("  \\n"), with no reason: the model reads the reason to know what to write instead` });
    expect(verdictOf('check', reject('x'))).toEqual({ verdict: { verdict: 'reject', reason: 'x' } });
  });

  it('fails the call rather than rejecting it with nothing to read', async () => {
    const check = definePlugin({
      name: 'check',
      description: 'Rejects every field, saying nothing',
      parameters: z.object({ text: z.string() }),
      consumes: 'field',
      hooks: { onPiece: () => reject(''), onEnd: ({ text }) => text },
    });
    const run = await runScriptedCall(inlineTool(check), { pieces: [{ kind: 'field', path: ['text'], value: 'a' }], args: { text: 'a' } });
    expect(run.rejected).toBeUndefined();
    expect(run.result).toEqual({ ok: false, content: `error: check's onPiece returned reject(""), with no reason: the model reads the reason to know what to write instead` });
  });
});
