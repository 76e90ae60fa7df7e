import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const note = answeringTool('note', () => 'noted');
const CALL = '<tool_call>\n{"name": "note", "arguments": {"text": "x"}}\n</tool_call>';

// Regression: vLLM's min_tokens went to every round as the client sent it, while max_tokens went
// as what the rounds before left of it: a later round asked for more at least than at most, and
// vLLM refused it (400 "min_tokens must be less than or equal to max_tokens") after the tools had
// run, for a request it would have taken whole. Like max_tokens, it bounds the whole answer.
describe("vLLM's min_tokens across tool rounds", () => {
  it('asks each later round for what the rounds before left of it, never more than its max_tokens', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      const usage = `data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 0, model: MODEL, choices: [], usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } })}\n\n`;
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: CALL }), vllmChunk({ content: '' }, 'stop'), usage, DONE].join(''));
    }, { tools: toolMap(note) });
    const res = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, max_tokens: 100, min_tokens: 50, messages: [{ role: 'user', content: 'take notes' }] });
    expect(res.status).toBe(200);
    const sent = scripted.upstream.requests.map((r) => (r.body as { min_tokens?: number; max_tokens?: number }));
    expect(sent.map((b) => [b.max_tokens, b.min_tokens])).toEqual([[100, 50], [70, 20], [40, 0], [10, 0]]);
  });

  describe('through the simulator, which checks it as vLLM does', () => {
    let conveyor: ConveyorHandle;
    beforeAll(async () => {
      conveyor = await startTestConveyor();
    });
    afterAll(async () => {
      await conveyor?.close();
    });

    it('answers a request whose min_tokens the first round already met, rather than a 400 for its second round', async () => {
      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', {
        model: SIM_MODEL,
        scenario: 'calculator',
        max_tokens: 70,
        min_tokens: 40,
        tools: [{ type: 'function', function: { name: 'calculator' } }],
        messages: [{ role: 'user', content: 'What is 200*701?' }],
      });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json.conveyor.rounds).toBe(2);
      expect(res.json.choices[0].message.content).toContain('140200');
    });
  });
});
