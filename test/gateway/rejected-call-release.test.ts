import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { eventually, SIM_MODEL, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson } from '../support/sse-client.ts';

const ask = (content: string) => ({ model: SIM_MODEL, scenario: 'database', messages: [{ role: 'user', content }] });
const observation = (res: { json: { conveyor: { messages: Array<{ role: string; content: string }> } } }) => res.json.conveyor.messages.find((m) => m.role === 'tool')!.content;

describe('a call its tool rejects lets go of its sandbox process', () => {
  let conveyor: ConveyorHandle;
  beforeAll(async () => {
    // One plugin process at a time: a rejected call that kept its process would starve every later call.
    conveyor = await startTestConveyor({
      runtimes: { process: { maxProcesses: 1, maxQueue: 4 } },
      plugins: { python: false, search: false, calculator: false, local_news: false, plan: false, http_get: false },
    });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('serves a SELECT after three rejected DELETEs with a single process allowed', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('Delete all the employees.'));
      expect(res.status).toBe(200);
      expect(observation(res)).toMatch(/^error: database rejected the call: /);
      await eventually(() => conveyor.pools.process.stats.running === 0, 'the rejected call gave its process back');
    }
    const res = await postJson(conveyor.gateway.url, '/v1/chat/completions', ask('Show me all employees.'));
    expect(res.status).toBe(200);
    expect(observation(res)).not.toMatch(/^error/);
    expect(res.json.choices[0].message.content).toContain('Here are all the rows of the employees table:');
  });
});
