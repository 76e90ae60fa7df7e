import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';
import { answeringTool, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';

const scripted = scriptedGateway();

type Message = { role: string; content?: string | null; tool_calls?: Array<{ id: string; function: { name: string } }>; tool_call_id?: string };

const CALC = '<tool_call>{"name": "calc", "arguments": {"expression": "2+2"}}</tool_call>';
const WEATHER_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>';

/** Round 1: `calls`, gateway tool (calc) and client tool (get_weather) in one turn; later, an answer naming what the model was shown. */
function roundCalling(calls: string): UpstreamHandler {
  return (_req, res, body) => {
    const messages = (body as { messages: Message[] }).messages;
    const shown = messages.map((m) => (m.role === 'tool' ? `tool:${m.content}` : m.role === 'assistant' ? `assistant:${(m.tool_calls ?? []).map((c) => c.function.name).join('+')}` : m.role));
    const content = messages.some((m) => m.role === 'tool') ? `shown: ${shown.join(' | ')}` : calls;
    sseHeaders(res);
    res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
  };
}
const mixedRound = roundCalling(CALC + WEATHER_CALL);

const WEATHER = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

describe("the gateway's tool turns of a response that ended with client calls", () => {
  it("are put back into the next turn of an agent loop that appends only `message` (the SDK's runTools)", async () => {
    const gw = await scripted.start(mixedRound, { tools: toolMap(answeringTool('calc', () => '4')) });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const runner = client.chat.completions.runTools({
      model: MODEL,
      messages: [{ role: 'user', content: 'weather and math' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: WEATHER.function.parameters, function: () => 'sunny', parse: (input: string) => JSON.parse(input) as object } }],
    });
    const answer = await runner.finalContent();
    // The second request as the model saw it: the gateway's calc call and its result are back,
    // next to the client's own call and result, in one assistant turn.
    expect(answer).toBe('shown: user | assistant:calc+get_weather | tool:4 | tool:sunny');
    const [, second] = scripted.upstream.requests;
    const sent = (second!.body as { messages: Message[] }).messages;
    const calcId = sent[1]!.tool_calls![0]!.id;
    expect(sent[2]).toMatchObject({ role: 'tool', tool_call_id: calcId, content: '4' });
  });

  it("are left as the client sent them when it appended `conveyor.messages`, and for another key", async () => {
    const gw = await scripted.start(mixedRound, { tools: toolMap(answeringTool('calc', () => '4')) }, { apiKeys: ['k-1', 'k-2'] });
    const restoredIds: string[] = [];
    const ask = async (key: string, messages: unknown[]) => {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: MODEL, tools: [WEATHER], messages }) });
      const id = res.headers.get('x-conveyor-request-id')!;
      const timeline = (await (await fetch(`${gw.url}/v1/requests/${id}/timeline`, { headers })).json()) as { events: Array<{ type: string }> };
      if (timeline.events.some((e) => e.type === 'history-restored')) restoredIds.push(key);
      return (await res.json()) as { choices: Array<{ message: { content: string | null; tool_calls: Array<{ id: string }> } }>; conveyor: { messages: Message[] } };
    };
    const user = { role: 'user', content: 'weather and math' };
    const first = await ask('k-1', [user]);
    const { message } = first.choices[0]!;
    const result = { role: 'tool', tool_call_id: message.tool_calls[0]!.id, content: 'sunny' };
    // The whole history, as conveyor.messages gives it: nothing to put back.
    expect((await ask('k-1', [user, ...first.conveyor.messages, result])).choices[0]!.message.content).toBe('shown: user | assistant:calc+get_weather | tool:4 | tool:sunny');
    // Another key's next turn that happens to quote the same message: not this key's to restore.
    expect((await ask('k-2', [user, { role: 'assistant', ...message }, result])).choices[0]!.message.content).toBe('shown: user | assistant:get_weather | tool:sunny');
    expect((await ask('k-1', [user, { role: 'assistant', ...message }, result])).choices[0]!.message.content).toBe('shown: user | assistant:calc+get_weather | tool:4 | tool:sunny');
    // Only that last request's history was restored, and its timeline says so.
    expect(restoredIds).toEqual(['k-1']);
  });

  it("list the round's calls in the order the model made them, a client's call before the gateway's included", async () => {
    const gw = await scripted.start(roundCalling(WEATHER_CALL + CALC), { tools: toolMap(answeringTool('calc', () => '4')) });
    const ask = (messages: unknown[]) =>
      fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, tools: [WEATHER], messages }) }).then(
        (res) => res.json() as Promise<{ choices: Array<{ message: { tool_calls: Array<{ id: string }> } }>; conveyor: { messages: Message[] } }>,
      );
    const user = { role: 'user', content: 'weather and math' };
    const first = await ask([user]);
    const [assistant, calcResult] = first.conveyor.messages;
    expect(assistant!.tool_calls!.map((c) => c.function.name)).toEqual(['get_weather', 'calc']);
    expect(calcResult).toMatchObject({ role: 'tool', tool_call_id: assistant!.tool_calls![1]!.id, content: '4' });
    // Continued, the model is shown its turn as it wrote it.
    const result = { role: 'tool', tool_call_id: first.choices[0]!.message.tool_calls[0]!.id, content: 'sunny' };
    const second = await ask([user, ...first.conveyor.messages, result]);
    expect((second as unknown as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('shown: user | assistant:get_weather+calc | tool:4 | tool:sunny');
  });
});
