import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

const RAW = '<think>The user wants weather; I could call <tool_call>{"name":"x","arguments":{}}</tool_call> but no.</think>Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';

describe('reasoning blocks through the gateway', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      gateway: { toolParsers: [{ model: 'mistral', format: 'hermes', reasoning: true }] },
      sim: { scenarios: [{ name: 'think', rules: [{ when: { explicit: true }, reply: RAW }] }] },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const body = { model: SIM_MODEL, scenario: 'think', tools, messages: [{ role: 'user', content: 'weather in Paris?' }] };

  it('sends a leading <think> block as reasoning_content and does not run calls written inside it', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', body);
    const message = res.json.choices[0].message;
    expect(message.reasoning_content).toBe('The user wants weather; I could call <tool_call>{"name":"x","arguments":{}}</tool_call> but no.');
    expect(message.content).toBe('Checking.');
    expect(message.tool_calls).toHaveLength(1);
    expect(message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city": "Paris"}' });
    expect(res.json.choices[0].finish_reason).toBe('tool_calls');
  });

  it('streams reasoning as delta.reasoning_content, never as content', async () => {
    const streamed = await streamChat(conveyor.gateway.url, body);
    const reasoning = streamed.chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(reasoning).toContain('The user wants weather');
    expect(streamed.content).toBe('Checking.');
  });
});
