import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, inlineTool, reject, runScriptedCall } from '../../../plugins/kit/index.ts';
import { DONE, MODEL, vllmChunk } from '../../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../../llm-client/upstream-test-server.ts';
import { scriptedGateway, toolMap } from '../../support/scripted-gateway.ts';
import { streamChat } from '../../support/sse-client.ts';

// An inline onAbort runs at once, inside the abort that a reject (or a throwing onPiece) sets off,
// and the gateway passes its ctx.emit progress to the client (plugins/README.md: "its ctx.emit
// progress still reaches the request"). runScriptedCall marked the call ended before that abort,
// so the same progress landed in `afterEnd`, "which the gateway passes none of": a test of what
// the client sees was told the opposite of what a real request shows.
const scripted = scriptedGateway();
const outbox = definePlugin({
  name: 'outbox',
  description: 'Sends a message to an address',
  parameters: z.object({ to: z.string(), text: z.string() }),
  consumes: 'field',
  hooks: {
    onPiece: (piece) => {
      if (piece.kind !== 'field' || piece.path.join('.') !== 'to') return undefined;
      if (piece.value === 'boom') throw new Error('no such mailbox');
      return String(piece.value).includes('@') ? undefined : reject('to must be an e-mail address');
    },
    onEnd: ({ to }) => `sent to ${to}`,
    onAbort: (reason, ctx) => ctx.emit({ type: 'unit-done', detail: `draft discarded (${reason})` }),
  },
});

function reply(res: ServerResponse, content: string): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
}

it.each(['bob', 'boom'])("passes an inline onAbort's progress on, as the gateway does, when onPiece answers %s", async (to) => {
  const run = await runScriptedCall(inlineTool(outbox), { pieces: [{ kind: 'field', path: ['to'], value: to }], args: { to, text: 'hi' } });
  const reason = to === 'bob' ? 'rejected: to must be an e-mail address' : 'failed: no such mailbox';
  expect(run.progress).toEqual([{ type: 'unit-done', detail: `draft discarded (${reason})` }]);
  expect(run.afterEnd).toEqual([]);

  const gw = await scripted.start((_req, res, body) => {
    const tool = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
    reply(res, tool ? 'noted' : `<tool_call>\n${JSON.stringify({ name: 'outbox', arguments: { to, text: 'hi' } })}\n</tool_call>\n`);
  }, { tools: toolMap(inlineTool(outbox)) });
  const streamed = await streamChat(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'mail bob' }] });
  const details = streamed.events.filter((e) => e.type === 'tool_call.progress').map((e) => e['detail']);
  expect(details).toEqual([`draft discarded (${reason})`]);
});
