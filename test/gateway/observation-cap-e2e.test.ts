import { afterEach, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import { SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson, streamChat } from '../support/sse-client.ts';

/** A model whose script prints `lines` numbered lines (about 11 characters each), then answers once it has seen the result. */
function printingScenario(lines: number): Scenario {
  return {
    name: 'prints-a-lot',
    rules: [
      { when: { explicit: true, lastRole: 'user' }, reply: `Printing.\n\`\`\`python\nfor i in range(${lines}):\n    print(f"line {i:05d}")\n\`\`\`\n` },
      { when: { explicit: true, lastRole: 'tool' }, reply: 'Done.' },
    ],
  };
}

const ask = { model: SIM_MODEL, scenario: 'prints-a-lot', messages: [{ role: 'user', content: 'Print the lines.' }] };

describe('a tool result longer than maxObservationChars', () => {
  let conveyor: ConveyorHandle | undefined;
  afterEach(async () => {
    await conveyor?.close();
    conveyor = undefined;
  });

  it('reaches the model with its middle cut, so the next round fits; the client sees what the model saw', async () => {
    conveyor = await startTestConveyor({ sim: { scenarios: [printingScenario(20_000)] }, gateway: { maxObservationChars: 3_000 } });
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const observation = (res.json.conveyor.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool')!.content;
    expect(observation.length).toBeLessThanOrEqual(3_000);
    expect(observation.startsWith('line 00000\nline 00001\n')).toBe(true);
    expect(observation).toMatch(/line 19999\n?$/);
    expect(observation).toMatch(/\[… [\d,]+ characters of this output cut …\]/);
    expect(res.json.choices[0].message.content).toContain('Done.');

    const streamed = await streamChat(conveyor.gateway.url, ask);
    const completed = streamed.events.find((e) => (e as { type: string }).type === 'tool_call.completed') as { content: string } | undefined;
    expect(completed?.content).toBe(observation);
  }, 60_000);

  it('left whole past the context, fails the request saying it was the tool results of round 1, not the client’s messages', async () => {
    conveyor = await startTestConveyor({ sim: { scenarios: [printingScenario(2_000)], maxModelLen: 2_048 }, gateway: { maxObservationChars: 1_000_000 } });
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask);
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/^round 2 of this request, whose prompt is your messages plus the tool calls and results of round 1, was refused by the upstream: /);
  }, 60_000);
});
