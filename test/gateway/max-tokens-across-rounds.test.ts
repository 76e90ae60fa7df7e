import { describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const note = answeringTool('note', () => 'noted');

const CALL = '<tool_call>\n{"name": "note", "arguments": {"text": "x"}}\n</tool_call>';

/** Each round calls `note` and reports 30 completion tokens, as vLLM's usage chunk does. */
function gatewayOverCallingModel(): Promise<GatewayHandle> {
  return scripted.start((_req, res) => {
    sseHeaders(res);
    const usage = `data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [], usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } })}\n\n`;
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: CALL }), vllmChunk({ content: '' }, 'stop'), usage, DONE].join(''));
  }, { tools: toolMap(note) });
}

const sent = (field: string) => scripted.upstream.requests.map((r) => (r.body as Record<string, unknown>)[field]);

describe('max_tokens across tool rounds', () => {
  it.each(['max_tokens', 'max_completion_tokens'])('%s bounds the whole answer: each round gets what the rounds before left', async (field) => {
    const gw = await gatewayOverCallingModel();
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, [field]: 100, messages: [{ role: 'user', content: 'take notes' }] });
    expect(res.status).toBe(200);
    expect(sent(field)).toEqual([100, 70, 40, 10]);
    expect(res.json.choices[0].finish_reason).toBe('length');
    expect(res.json.conveyor).toMatchObject({ stop_reason: 'length', rounds: 4 });
    expect(res.json.usage.completion_tokens).toBe(120);
  });

  it('leaves rounds unbounded without one, until max_tool_rounds', async () => {
    const gw = await gatewayOverCallingModel();
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, max_tool_rounds: 3, messages: [{ role: 'user', content: 'take notes' }] });
    expect(sent('max_tokens')).toEqual([undefined, undefined, undefined]);
    expect(res.json.conveyor).toMatchObject({ stop_reason: 'max_tool_rounds', rounds: 3 });
  });

  // A stream's finish_reason "length" read the same for both; only a non-streamed body said which.
  it('says in a stream too which limit ended it: response.messages carries the stop reason', async () => {
    const gw = await gatewayOverCallingModel();
    const rounds = await streamChat(gw.url, { model: MODEL, max_tool_rounds: 2, messages: [{ role: 'user', content: 'take notes' }] });
    expect(rounds.chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
    expect(rounds.events.find((e) => e.type === 'response.messages')).toMatchObject({ stop_reason: 'max_tool_rounds' });
    const tokens = await streamChat(gw.url, { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'take notes' }] });
    expect(tokens.events.find((e) => e.type === 'response.messages')).toMatchObject({ stop_reason: 'length' });
  });

  it('counts the deltas of a round the gateway cut short, which has no usage, against the budget', async () => {
    // Rejects any city at its field, cutting the decode there.
    const strict: ToolPlugin = {
      name: 'weather',
      description: 'weather (a test tool)',
      parameters: { type: 'object' },
      consumes: 'field',
      start: () => ({ piece: () => ({ verdict: 'reject', reason: 'no such city' }), end: async () => ({ ok: true, content: 'sunny' }), abort: () => {} }),
    };
    const gw = await scripted.start(
      (_req, res) => {
        sseHeaders(res);
        if (scripted.upstream.requests.length === 1) {
          // Seven deltas up to the end of the field, then the rest would follow: the gateway cuts first.
          const deltas = ['<tool_call>', '\n{"name": ', '"weather", ', '"arguments": ', '{"city": ', '"Atlantis', '"'];
          res.write([vllmChunk({ role: 'assistant', content: '' }), ...deltas.map((content) => vllmChunk({ content }))].join(''));
          return; // left open: no usage ever comes
        }
        const usage = `data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`;
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'There is no Atlantis.' }), vllmChunk({ content: '' }, 'stop'), usage, DONE].join(''));
      },
      { tools: toolMap(strict) },
    );
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'weather in Atlantis?' }] });
    expect(res.json.conveyor).toMatchObject({ stop_reason: 'answer', rounds: 2 });
    expect(sent('max_tokens')).toEqual([100, 93]);
    // The reported usage stays what the upstream reported.
    expect(res.json.usage.completion_tokens).toBe(5);
  });
});
