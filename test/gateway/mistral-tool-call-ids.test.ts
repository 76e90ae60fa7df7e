import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../gateway/chat-request-schema.ts';
import { mistralToolCallId, withMistralToolCallIds } from '../../gateway/mistral-tool-call-ids.ts';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { postJson } from '../support/sse-client.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';

const NINE = /^[A-Za-z0-9]{9}$/;

describe('mistralToolCallId', () => {
  it('keeps a nine-character id and writes any other as nine letters and digits, the same every time', () => {
    expect(mistralToolCallId('aB3dE6gH9')).toBe('aB3dE6gH9');
    for (const id of ['call_r1_py1', 'call_r1_1', 'call_r12_tc10', 'call_abc123DEF456ghi789JKL012', 'x', '']) {
      expect(mistralToolCallId(id)).toMatch(NINE);
      expect(mistralToolCallId(id)).toBe(mistralToolCallId(id));
    }
  });

  it('gives different ids different names', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `call_r${i % 50}_${i}`);
    expect(new Set(ids.map(mistralToolCallId)).size).toBe(ids.length);
  });

  it('renames calls and observations alike, and leaves a conversation without calls as it is', () => {
    const plain: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    expect(withMistralToolCallIds(plain)).toBe(plain);
    const renamed = withMistralToolCallIds([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_r1_py1', type: 'function', function: { name: 'python', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_r1_py1', content: 'ok' },
    ]);
    const call = renamed[1]!.role === 'assistant' ? renamed[1]!.tool_calls![0]!.id : '';
    expect(call).toMatch(NINE);
    expect(renamed[2]).toMatchObject({ role: 'tool', tool_call_id: call, content: 'ok' });
  });
});

describe('a Mistral-format model gets nine-character tool-call ids (its chat template refuses others)', () => {
  const scripted = scriptedGateway();
  const MISTRAL = 'mistralai/Mistral-7B-Instruct-v0.3';

  it("renames the gateway's and the client's ids in what goes upstream; the client keeps the gateway's", async () => {
    const gateway = await scripted.start(
      (_req, res, body) => {
        const answered = (body as { messages: Array<{ role: string }> }).messages.at(-1)!.role === 'tool';
        const content = answered ? 'Done.' : '[TOOL_CALLS][{"name": "echo", "arguments": {"text": "hi"}}]';
        sseHeaders(res);
        res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { tools: toolMap(answeringTool('echo', (args) => String(args['text']))) },
    );
    const earlier = 'call_abc123DEF456ghi789JKL012'; // an id from an earlier turn, OpenAI-style
    const res = await postJson(gateway.url, '/v1/chat/completions', {
      model: MISTRAL,
      messages: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: null, tool_calls: [{ id: earlier, type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: earlier, content: 'earlier result' },
        { role: 'user', content: 'echo hi' },
      ],
    });
    expect(res.status).toBe(200);
    const gatewayId = res.json.conveyor.messages[0].tool_calls[0].id as string;
    expect(gatewayId).toMatch(/^call_[0-9a-f]{8}_r1_/);
    expect(res.json.conveyor.messages[1]).toMatchObject({ role: 'tool', tool_call_id: gatewayId, content: 'hi' });

    const round2 = scripted.upstream.requests[1]!.body as { messages: Array<{ role: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }> };
    const ids = round2.messages.flatMap((m) => [...(m.tool_calls ?? []).map((c) => c.id), ...(m.tool_call_id ? [m.tool_call_id] : [])]);
    expect(ids).toEqual([mistralToolCallId(earlier), mistralToolCallId(earlier), mistralToolCallId(gatewayId), mistralToolCallId(gatewayId)]);
    for (const id of ids) expect(id).toMatch(NINE);
  });

  it('leaves the ids of other formats alone', async () => {
    const gateway = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'ok' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const history = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc123DEF456ghi789JKL012', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_abc123DEF456ghi789JKL012', content: 'r' },
    ];
    await postJson(gateway.url, '/v1/chat/completions', { model: 'Qwen/Qwen2.5-7B-Instruct', messages: history });
    expect((scripted.upstream.requests[0]!.body as { messages: unknown[] }).messages).toEqual(history);
  });
});
