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

describe('DeepSeek-R1 through the gateway, its reasoning split by the upstream or by the gateway', () => {
  // R1's template opens <think> in the prompt: the model writes its reasoning, then </think>.
  const REPLY = 'Two and two make four.</think>\n\nThe answer is 4.';
  const think = { name: 'r1', rules: [{ when: {}, reply: REPLY }] };
  let split: ConveyorHandle;
  let raw: ConveyorHandle;
  beforeAll(async () => {
    [split, raw] = await Promise.all([
      startTestConveyor({ sim: { modelName: 'deepseek-r1-sim', reasoningParser: 'deepseek_r1', scenarios: [think] } }),
      startTestConveyor({ sim: { modelName: 'deepseek-r1-sim', scenarios: [think] } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([split?.close(), raw?.close()]);
  });

  it.each([
    ['vLLM with --reasoning-parser deepseek_r1 (reasoning_content on the wire)', () => split],
    ['vLLM without one (the whole text: the gateway reads the block the prompt opened)', () => raw],
  ])('%s: the answer is the content, the thinking reasoning_content', async (_name, conveyor) => {
    const body = { model: 'deepseek-r1-sim', scenario: 'r1', messages: [{ role: 'user', content: '2+2?' }] };
    const res = await postJson(conveyor().gateway.url, '/v1/chat/completions', body);
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.reasoning_content).toBe('Two and two make four.');
    expect(res.json.choices[0].message.content).toBe('\n\nThe answer is 4.');
    const streamed = await streamChat(conveyor().gateway.url, { ...body, stream: true });
    expect(streamed.content).toBe('\n\nThe answer is 4.');
  });
});
