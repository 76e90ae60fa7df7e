import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

type Message = { role: string; content?: string | null; tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** Round 1 calls the gateway's calc and the client's get_weather; a later round names what the model was shown. */
const mixedRound: UpstreamHandler = (_req, res, body) => {
  const messages = (body as { messages: Message[] }).messages;
  const shown = messages.map((m) => (m.role === 'tool' ? `tool:${m.content}` : m.role === 'assistant' ? `assistant:${(m.tool_calls ?? []).map((c) => c.function.name).join('+')}` : m.role));
  const content = messages.some((m) => m.role === 'tool')
    ? `shown: ${shown.join(' | ')}`
    : '<tool_call>{"name": "calc", "arguments": {"expression": "2+2"}}</tool_call><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1.0}}</tool_call>';
  sseHeaders(res);
  res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
};

const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } } } } };

describe("the gateway's tool turns put back for a client that re-serialises the calls it was sent", () => {
  it('are restored when the arguments come back as the same JSON written another way (LangChain: JSON.stringify / json.dumps of the parsed args)', async () => {
    const gw = await scripted.start(mixedRound, { tools: toolMap(answeringTool('calc', () => '4')) });
    const user = { role: 'user', content: 'weather and math' };
    const first = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tools: [WEATHER], messages: [user] });
    expect(first.status).toBe(200);
    const call = first.json.choices[0].message.tool_calls[0];
    expect(call.function.arguments).toBe('{"city": "Oslo", "days": 1.0}');
    // LangChain keeps a call's parsed args and writes them again for the next request: JS's
    // JSON.stringify drops the spaces and the ".0"; its assistant turn's content is "".
    const rewritten = { ...call, function: { ...call.function, arguments: JSON.stringify(JSON.parse(call.function.arguments)) } };
    expect(rewritten.function.arguments).toBe('{"city":"Oslo","days":1}');
    const second = await postJson(gw.url, '/v1/chat/completions', {
      model: MODEL,
      tools: [WEATHER],
      messages: [user, { role: 'assistant', content: '', tool_calls: [rewritten] }, { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
    });
    expect(second.status).toBe(200);
    expect(second.json.choices[0].message.content).toBe('shown: user | assistant:calc+get_weather | tool:4 | tool:sunny');
  });

  it('are not restored for a turn whose arguments differ in value', async () => {
    const gw = await scripted.start(mixedRound, { tools: toolMap(answeringTool('calc', () => '4')) });
    const user = { role: 'user', content: 'weather and math' };
    const first = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, tools: [WEATHER], messages: [user] });
    const call = first.json.choices[0].message.tool_calls[0];
    const edited = { ...call, function: { ...call.function, arguments: '{"city":"Bergen","days":1}' } };
    const second = await postJson(gw.url, '/v1/chat/completions', {
      model: MODEL,
      tools: [WEATHER],
      messages: [user, { role: 'assistant', content: '', tool_calls: [edited] }, { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
    });
    expect(second.json.choices[0].message.content).toBe('shown: user | assistant:get_weather | tool:sunny');
  });
});
