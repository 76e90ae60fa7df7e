import { expect, it } from 'vitest';
import { runScriptedCall } from '../../../plugins/kit/index.ts';
import type { ToolPlugin } from '../../../plugins/kit/index.ts';
import { scriptedGateway, toolMap } from '../../support/scripted-gateway.ts';
import { postJson } from '../../support/sse-client.ts';
import { DONE, MODEL, vllmChunk } from '../../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../../llm-client/upstream-test-server.ts';

// A hand-written ToolPlugin whose start() throws: the gateway answers that call with
// `error: <tool> failed: <message>` and the request goes on (gateway/dispatcher.ts), but
// runScriptedCall threw, so an author's test of it failed where the gateway copes, and could not
// assert what the model reads.
const scripted = scriptedGateway();
const broken: ToolPlugin = {
  name: 'broken',
  description: 'a plugin bug',
  parameters: { type: 'object', properties: {} },
  consumes: 'field',
  start: () => {
    throw new Error('no sandbox for you');
  },
};

it('gives a tool whose start() throws the same tool error the gateway gives the model', async () => {
  const run = await runScriptedCall(broken, { pieces: [{ kind: 'field', path: ['a'], value: 1 }], args: { a: 1 } });
  expect(run).toEqual({ verdicts: [], progress: [], afterEnd: [], result: { ok: false, content: 'error: broken failed: no sandbox for you' } });

  const gw = await scripted.start((_req, res, body) => {
    const observed = (body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
    sseHeaders(res);
    const content = observed ? `heard: ${observed.content}` : `<tool_call>\n${JSON.stringify({ name: 'broken', arguments: { a: 1 } })}\n</tool_call>\n`;
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  }, { tools: toolMap(broken) });
  const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'go' }] });
  expect(res.json.choices[0].message.content.trim()).toBe(`heard: ${run.result!.content}`);
});
