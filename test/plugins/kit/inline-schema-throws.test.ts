import { expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, inlineTool } from '../../../plugins/kit/index.ts';

// A schema that throws as it parses, rather than reporting an issue: a transform that throws
// (`JSON.parse` of a string that is not JSON) or an async refinement (zod: "Encountered Promise
// during synchronous parse"). The inline call's end() threw past its own bookkeeping: the call's
// clock ran on and fired onAbort with `timed out after N ms` long after the call had its result,
// its listener stayed on the request's signal, and onAbort did not run when the call ended.
// It now ends as a hook that throws does: its error, and onAbort at once with `failed: …`.
it('a parameters schema that throws ends the inline call with its error, onAbort run once, at once', async () => {
  const aborted: string[] = [];
  const tool = inlineTool(definePlugin({
    name: 'settings',
    description: 'Applies settings written as JSON',
    parameters: z.object({ json: z.string().transform((s) => JSON.parse(s) as unknown) }),
    consumes: 'call',
    limits: { timeoutMs: 60_000 },
    hooks: { onEnd: () => 'applied', onAbort: (reason) => void aborted.push(reason) },
  }));
  const request = new AbortController();
  const execution = tool.start({ callId: 'call_1', signal: request.signal, emit: () => undefined });
  const result = await execution.end({ json: '{not json' });
  expect(result.ok).toBe(false);
  expect(result.content).toMatch(/^error: settings failed: (SyntaxError: )?.*JSON/);
  expect(aborted).toEqual([`failed: ${result.content.slice('error: settings failed: '.length)}`]);
  // The call is over: the request going away later is not this call's abort.
  request.abort();
  expect(aborted).toHaveLength(1);
});
