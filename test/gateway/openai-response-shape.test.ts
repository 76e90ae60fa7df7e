import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk, vllmUsage } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();
const note = answeringTool('note', () => 'noted');
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** A round of Hermes text (MODEL reads as Hermes), with vLLM's usage chunk. */
function reply(res: ServerResponse, content: string): void {
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), vllmUsage(10, 3), DONE].join(''));
}

const hasObservation = (body: unknown) => (body as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool');
const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: MODEL, messages: [{ role: 'user', content }], ...extra });

describe('responses in OpenAI’s shape', () => {
  it('puts "usage": null on every chunk before the usage chunk under stream_options.include_usage, and no usage key without it', async () => {
    const gw = await scripted.start((_req, res, body) => reply(res, hasObservation(body) ? 'Noted.' : '<tool_call>\n{"name": "note", "arguments": {}}\n</tool_call>'), { tools: toolMap(note) });
    const counted = await streamChat(gw.url, ask('take a note', { stream_options: { include_usage: true } }));
    expect(counted.done).toBe(true);
    const last = counted.chunks.at(-1)!;
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26 } });
    // "All other chunks will also include a usage field, but with a null value" (OpenAI's API reference):
    // the role chunk, every token, the tool events and the finish chunk.
    const others = counted.chunks.slice(0, -1);
    expect(others.length).toBeGreaterThan(5);
    expect(others.filter((chunk) => !('usage' in chunk) || chunk.usage !== null)).toEqual([]);

    const plain = await streamChat(gw.url, ask('take a note'));
    expect(plain.chunks.filter((chunk) => 'usage' in chunk)).toEqual([]);
  });

  it('gives a non-streamed message refusal: null, and a tool-call-only turn content null in the message and in conveyor.messages alike', async () => {
    const gw = await scripted.start((_req, res, body) =>
      reply(res, hasObservation(body) ? 'Noted.' : '<tool_call>\n{"name": "note", "arguments": {}}\n</tool_call><tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'),
      { tools: toolMap(note) },
    );
    // Round 1 calls the gateway's note and the client's get_weather, and writes no text.
    const res = await postJson(gw.url, '/v1/chat/completions', ask('note it, then the weather', { tools: [{ type: 'function', function: { name: 'note' } }, weather] }));
    expect(res.status).toBe(200);
    const message = res.json.choices[0].message;
    expect(message).toEqual({ role: 'assistant', content: null, refusal: null, tool_calls: [{ id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }] });
    const [turn, observation] = res.json.conveyor.messages;
    expect(turn).toMatchObject({ role: 'assistant', content: null });
    expect(turn.tool_calls.map((c: { function: { name: string } }) => c.function.name)).toEqual(['note', 'get_weather']);
    expect(observation).toMatchObject({ role: 'tool', content: 'noted' });

    // A turn sent back with content null is taken (OpenAI's own history shape).
    const next = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'again' }, ...res.json.conveyor.messages, { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny' }] });
    expect(next.status).toBe(200);
    expect(next.json.choices[0].message).toEqual({ role: 'assistant', content: 'Noted.', refusal: null });
  });
});
