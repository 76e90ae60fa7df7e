import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

/**
 * A thinking model that thinks in each of its tool rounds: the response's reasoning is every
 * round's, and a later round's starts a paragraph of its own, as its text does. Glued, round 1's
 * "I should compute." and round 2's "It said 4." read as one thought: "I should compute.It said 4."
 */
describe("a thinking model's reasoning across tool rounds", () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      gateway: { toolParsers: [{ model: 'mistral', format: 'hermes', reasoning: true }] },
      sim: {
        scenarios: [
          {
            name: 'think-calc',
            rules: [
              { when: { explicit: true, round: 1, lastRole: 'user' }, reply: '<think>I should compute.</think><tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}</tool_call>' },
              { when: { explicit: true, lastRole: 'tool' }, reply: '<think>It said {{tool_output}}.</think>It is {{tool_output}}.' },
            ],
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const body = { model: SIM_MODEL, scenario: 'think-calc', messages: [{ role: 'user', content: 'What is 2+2?' }] };

  it('parts the rounds of a non-streamed answer’s reasoning_content with a blank line', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', body);
    expect(res.json.conveyor.rounds).toBe(2);
    expect(res.json.choices[0].message).toMatchObject({ content: 'It is 4.', reasoning_content: 'I should compute.\n\nIt said 4.' });
  });

  it('streams the same reasoning, the blank line included', async () => {
    const streamed = await streamChat(conveyor.gateway.url, body);
    const reasoning = streamed.chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(reasoning).toBe('I should compute.\n\nIt said 4.');
    expect(streamed.content).toBe('It is 4.');
  });

  it("parts them without the client's stop strings, which bound the reasoning as they bound the text", async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...body, stop: ['\n'] });
    expect(res.json.choices[0].message.reasoning_content).toBe('I should compute. It said 4.');
  });
});
