import { describe, expect, it } from 'vitest';
import { DONE, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { postJson } from '../support/sse-client.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();
/** No rule matches it: code fences only, the case of a model without a tool format. */
const GEMMA = 'google/gemma-2-9b-it';
const FENCED = 'Let me compute it.\n```python\nprint(6 * 7)\n```\n';

type Body = { messages: Array<{ role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }> };

/** A model that writes one python fence, then answers once it has seen a result (in whatever role). */
function fenceThenAnswer(observations: 'tool' | 'user') {
  return scripted.start(
    (req, res, body) => {
      // The gateway asks which model a name it has no rule for adapts (none here).
      if (req.method === 'GET') return void res.end('{"object":"list","data":[]}');
      const seen = (body as Body).messages.length > 1;
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: seen ? 'It is 42.' : FENCED }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    },
    { tools: toolMap(answeringTool('python', () => '42')) },
    { observations },
  );
}

/** The chat requests the upstream got, in order. */
const chats = () => scripted.upstream.requests.filter((r) => r.method === 'POST');

describe('observations: how tool results go back to the model', () => {
  it("'user': the assistant's text as written, then one user message with the result (no tool role for the template to refuse)", async () => {
    const gateway = await fenceThenAnswer('user');
    const res = await postJson(gateway.url, '/v1/chat/completions', { model: GEMMA, messages: [{ role: 'user', content: 'What is 6*7?' }] });
    expect(res.status).toBe(200);
    const round2 = (chats()[1]!.body as Body).messages;
    expect(round2).toEqual([
      { role: 'user', content: 'What is 6*7?' },
      { role: 'assistant', content: FENCED },
      { role: 'user', content: 'The python tool returned:\n42' },
    ]);
    expect(res.json.conveyor.messages).toEqual(round2.slice(1));
    expect(res.json.choices[0].message.content).toContain('It is 42.');
  });

  it("'tool' (the default): the assistant turn with its tool_calls, then a tool message", async () => {
    const gateway = await fenceThenAnswer('tool');
    await postJson(gateway.url, '/v1/chat/completions', { model: GEMMA, messages: [{ role: 'user', content: 'What is 6*7?' }] });
    const round2 = (chats()[1]!.body as Body).messages;
    expect(round2.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(round2[1]!.tool_calls).toHaveLength(1);
    expect(round2[2]!.content).toBe('42');
  });
});
