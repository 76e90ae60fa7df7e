import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

// Regression: vLLM's prompt_logprobs went upstream, where the gateway's request is always a
// stream: vLLM refuses it there ("`prompt_logprobs` are not available when `stream=True`"), to a
// client that had not asked for a stream, and an upstream that took it sent them nowhere the
// re-framed answer carries. Refused in the gateway's words, as logprobs and return_token_ids are.
describe("vLLM's prompt_logprobs", () => {
  it('is refused with a 400 naming it, before anything goes upstream; 0 and null, which ask for none, pass', async () => {
    const gw = await scripted.start((_req, res) => {
      sseHeaders(res);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'hi' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const ask = (extra: Record<string, unknown>) => postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra });
    for (const value of [1, -1]) {
      const refused = await ask({ prompt_logprobs: value });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toEqual({ message: expect.stringMatching(/^prompt_logprobs: .*not supported/), type: 'invalid_request_error', param: 'prompt_logprobs', code: 'invalid_request' });
    }
    expect(scripted.upstream.requests).toEqual([]);
    for (const value of [0, null]) expect((await ask({ prompt_logprobs: value })).status).toBe(200);
  });
});
