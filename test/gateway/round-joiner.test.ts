import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundJoiner } from '../../gateway/round-joiner.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

describe('roundJoiner', () => {
  it('is a blank line, or the newline that makes one', () => {
    expect(roundJoiner('Let me compute. ', 'The answer', undefined)).toBe('\n\n');
    expect(roundJoiner('```\n', 'The answer', [])).toBe('\n');
  });

  it('holds none of the client’s stop strings, nor makes one with the text on either side', () => {
    expect(roundJoiner('Let me compute. ', 'The answer', '\n')).toBe('');
    expect(roundJoiner('Let me compute.', 'The answer', ['\n'])).toBe(' ');
    expect(roundJoiner('```', 'The answer', ['\n\n'])).toBe('\n');
    expect(roundJoiner('line\n', 'The answer', ['\n\n'])).toBe('');
    expect(roundJoiner('done.', 'Next', ['\nNext'])).toBe(' ');
    expect(roundJoiner('done.', 'Next', ['', 'x'])).toBe('\n\n');
  });
});

/**
 * OpenAI: "The returned text will not contain the stop sequence." A tool round's answer joined
 * to the text before it by the gateway's blank line held a `stop: ["\n"]` the model itself never
 * wrote: a client taking the answer's first line got only the text before the tool call.
 */
describe("the client's stop strings and the text the gateway puts between rounds", () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    conveyor = await startTestConveyor({
      sim: {
        scenarios: [
          {
            name: 'calc-inline',
            rules: [
              { when: { explicit: true, round: 1, lastRole: 'user' }, reply: 'Let me compute. [TOOL_CALLS][{"name": "calculator", "arguments": {"expression": "200*701"}}]' },
              { when: { explicit: true, lastRole: 'tool' }, reply: 'The answer is {{tool_output}}.' },
            ],
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  const body = { model: SIM_MODEL, scenario: 'calc-inline', stop: ['\n'], messages: [{ role: 'user', content: 'What is 200*701?' }] };

  it('leaves a stop string out of a non-streamed answer', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', body);
    expect(res.json.conveyor.rounds).toBe(2);
    expect(res.json.choices[0].message.content).toBe('Let me compute. The answer is 140200.');
  });

  it('leaves it out of a stream', async () => {
    const streamed = await streamChat(conveyor.gateway.url, body);
    expect(streamed.content).toBe('Let me compute. The answer is 140200.');
  });

  it('keeps the blank line for a request whose stop strings are not in it', async () => {
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', { ...body, stop: 'STOP' });
    expect(res.json.choices[0].message.content).toBe('Let me compute. \n\nThe answer is 140200.');
  });
});
