import { expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, inlineTool, runScriptedCall } from '../../../plugins/kit/index.ts';

// onEnd returning a Date, a Map or a URL (the value itself, not its text) was said to return
// "an empty object": those have no keys of their own, so the author was sent looking for an
// object literal that is not in the code. The class is named now.
it.each([
  ['a Date', () => new Date(0)],
  ['a Map', () => new Map([['a', 1]])],
  ['a URL', () => new URL('https://example.com/')],
  ['an empty object', () => ({})],
])('names what onEnd returned: %s', async (said, value) => {
  const tool = inlineTool(definePlugin({
    name: 'when', description: 'Says when', parameters: z.object({}), consumes: 'call',
    hooks: { onEnd: value as never },
  }));
  const run = await runScriptedCall(tool, { args: {} });
  expect(run.result).toEqual({ ok: false, content: `error: when's onEnd returned ${said}, not a string or { ok, content }` });
});
