import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();

/** Round 1 calls the calculator, round 2 answers; each reports its usage as vLLM with --enable-prompt-tokens-details does. */
const twoRounds = (_req: unknown, res: Parameters<typeof sseHeaders>[0], body: unknown) => {
  const second = (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
  const content = second ? 'It is 5.' : '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+3"}}\n</tool_call>';
  const usage = second
    ? { prompt_tokens: 80, completion_tokens: 4, total_tokens: 84, prompt_tokens_details: { cached_tokens: 48 } }
    : { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, prompt_tokens_details: { cached_tokens: 16 } };
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [], usage })}\n\n`, DONE].join(''));
};

describe("the upstream's usage details", () => {
  it("pass through summed over the rounds: the prefix cache's cached_tokens reach the client", async () => {
    const gw = await scripted.start(twoRounds, { tools: toolMap(answeringTool('calculator', () => '5')) });
    const expected = { prompt_tokens: 130, completion_tokens: 24, total_tokens: 154, prompt_tokens_details: { cached_tokens: 64 } };
    const answer = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'add' }] });
    expect(answer.json.choices[0].message.content).toBe('It is 5.');
    expect(answer.json.usage).toEqual(expected);
    const streamed = await streamChat(gw.url, { model: MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'add' }] });
    expect(streamed.chunks.at(-1)?.usage).toEqual(expected);
  });
});
