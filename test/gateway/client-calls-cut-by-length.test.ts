import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk, vllmUsage } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();

/** A client call written whole, then a second one the token limit cuts inside its arguments. */
const cutSecondCall: UpstreamHandler = (_req, res) => {
  const text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Ber';
  sseHeaders(res);
  const pieces = text.match(/.{1,6}/gs)!;
  res.end([vllmChunk({ role: 'assistant', content: '' }), ...pieces.map((p) => vllmChunk({ content: p })), vllmChunk({ content: '' }, 'length'), vllmUsage(12, 40), DONE].join(''));
};

const WEATHER = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

describe('a round the token limit cut after a client call it completed', () => {
  it('ends with finish_reason "length", streamed (whose client holds the cut call) and not, rather than "tool_calls"', async () => {
    const gw = await scripted.start(cutSecondCall);
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = { model: MODEL, messages: [{ role: 'user' as const, content: 'weather in Oslo and Bergen' }], tools: [WEATHER], max_tokens: 40 };

    const streamed = await client.chat.completions.stream(ask).finalChatCompletion();
    const calls = streamed.choices[0]!.message.tool_calls!;
    // The cut call's first deltas went out before the limit: the accumulated message holds it unfinished.
    expect(calls.map((c) => c.function.arguments)).toEqual(['{"city": "Oslo"}', '{"city": "Ber']);
    // "Go by finish_reason, as for any OpenAI stream cut by max_tokens" (README): it must say so.
    expect(streamed.choices[0]!.finish_reason).toBe('length');

    const plain = await client.chat.completions.create(ask);
    expect(plain.choices[0]!.finish_reason).toBe('length');
    expect(plain.choices[0]!.message.tool_calls!.map((c) => (c as { function: { arguments: string } }).function.arguments)).toEqual(['{"city": "Oslo"}']);
  });
});
